// A hash of the extension's sources, written in by `tabwire extension-path`; 'dev' when
// the extension is loaded straight from the repository.
export const BUILD_STAMP = 'dev';
