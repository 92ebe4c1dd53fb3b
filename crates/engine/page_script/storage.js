// Web storage (localStorage / sessionStorage) for storage_get and storage_set.

function storageArea(area) {
  if (area === 'session') return window.sessionStorage;
  if (area === 'local' || area == null) return window.localStorage;
  return null;
}

// One key, or a page of keys bounded by count and bytes, in key order so paging is stable.
TW.storage_get = function (args) {
  let store;
  try { store = storageArea(args.area); } catch (e) { return { status: 'storage_unavailable', message: String(e.message || e) }; }
  if (!store) return { status: 'invalid_input', message: "the storage area must be local or session" };
  if (args.key != null) {
    const value = store.getItem(args.key);
    return { status: 'ok', key: args.key, found: value !== null, value };
  }
  const keys = [];
  for (let i = 0; i < store.length; i++) keys.push(store.key(i));
  keys.sort();
  const offset = Math.max(0, args.offset | 0);
  const maxItems = args.max_items > 0 ? args.max_items : 100;
  const maxBytes = args.max_bytes > 0 ? args.max_bytes : 65536;
  const items = [];
  let bytes = 0, i = offset;
  for (; i < keys.length && items.length < maxItems; i++) {
    const value = store.getItem(keys[i]);
    const size = (keys[i].length + (value || '').length) * 2; // UTF-16, as browsers count quota
    if (items.length && bytes + size > maxBytes) break;
    bytes += size;
    items.push({ key: keys[i], value });
  }
  return {
    status: 'ok', items, total: keys.length, offset,
    next_offset: i < keys.length ? i : null, truncated: i < keys.length,
  };
};

// Writes, then reads back: a quota or privacy-mode failure is reported, never lost.
TW.storage_set = function (args) {
  let store;
  try { store = storageArea(args.area); } catch (e) { return { status: 'storage_unavailable', message: String(e.message || e) }; }
  if (!store) return { status: 'invalid_input', message: "the storage area must be local or session" };
  try {
    store.setItem(args.key, args.value);
  } catch (e) {
    const quota = e && (e.name === 'QuotaExceededError' || e.code === 22);
    return { status: quota ? 'quota_exceeded' : 'storage_error', message: String(e.message || e) };
  }
  const back = store.getItem(args.key);
  if (back !== args.value) return { status: 'not_persisted', message: 'the value read back differs from the value written' };
  return { status: 'ok', key: args.key, bytes: args.value.length * 2, verified: true };
};
