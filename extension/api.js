// The browser APIs tabwire calls by name. One table serves both ways in: the link
// (`Tabwire.call` messages, see cdp.js) and, in a browser tabwire launched, CDP evaluation
// of `self.tabwireCall(...)` in this worker.

import { BUILD_STAMP } from './stamp.js';

const API = {
  'bookmarks.getTree': () => chrome.bookmarks.getTree(),
  'bookmarks.getSubTree': ({ id }) => chrome.bookmarks.getSubTree(id),
  'bookmarks.create': ({ parentId, title, url }) => chrome.bookmarks.create({ parentId, title, url }),
  'bookmarks.remove': ({ id }) => chrome.bookmarks.remove(id),
  'bookmarks.removeTree': ({ id }) => chrome.bookmarks.removeTree(id),
  'history.search': ({ text, startTime, endTime, maxResults }) =>
    chrome.history.search({ text: text || '', startTime, endTime, maxResults }),
  'management.getAll': () => chrome.management.getAll(),
  'management.setEnabled': ({ id, enabled }) => chrome.management.setEnabled(id, enabled),
  'management.uninstall': ({ id, showConfirmDialog }) => chrome.management.uninstall(id, { showConfirmDialog }),
  'runtime.sendMessage': ({ id, message }) => chrome.runtime.sendMessage(id, message),
  'runtime.self': () => ({ id: chrome.runtime.id, version: chrome.runtime.getManifest().version, build_stamp: BUILD_STAMP }),
};

export async function call(name, args) {
  const method = API[name];
  if (!method) throw new Error('unknown browser API ' + name);
  const result = await method(args || {});
  return result === undefined ? null : result;
}

// Reachable only from this worker's own context (and a debugger tabwire holds on it).
self.tabwireCall = call;
