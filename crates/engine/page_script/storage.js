// Web storage (localStorage / sessionStorage) for storage_get and storage_set.

function storageArea(area) {
  if (area === 'session') return window.sessionStorage;
  if (area === 'local' || area == null) return window.localStorage;
  return null;
}

// How many bytes a text takes as UTF-8 (what a page of items is bounded by).
function utf8Bytes(text) {
  return new TextEncoder().encode(text).length;
}

// How many characters (code points) a text has: a surrogate pair is one.
function codePoints(text) {
  let count = text.length;
  for (let i = 0; i + 1 < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) { count--; i++; }
    }
  }
  return count;
}

// One key, or a page of keys bounded by count and UTF-8 bytes, in key order so paging is
// stable. A page holds at least one item, so paging always moves on.
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
  const items = {};
  let bytes = 0, count = 0, i = offset;
  for (; i < keys.length && count < maxItems; i++) {
    const value = store.getItem(keys[i]) || '';
    const size = utf8Bytes(keys[i]) + utf8Bytes(value);
    if (count && bytes + size > maxBytes) break;
    bytes += size;
    items[keys[i]] = value;
    count++;
  }
  return {
    status: 'ok', items, count, total_keys: keys.length, offset, bytes,
    next_offset: i < keys.length ? i : null, truncated: i < keys.length,
  };
};

// Writes, then reads back: a quota or privacy-mode failure is reported, never lost.
TW.storage_set = function (args) {
  let store;
  try { store = storageArea(args.area); } catch (e) { return { status: 'storage_unavailable', message: String(e.message || e) }; }
  if (!store) return { status: 'invalid_input', message: "the storage area must be local or session" };
  const existed = store.getItem(args.key) !== null;
  try {
    store.setItem(args.key, args.value);
  } catch (e) {
    const quota = e && (e.name === 'QuotaExceededError' || e.code === 22);
    return { status: quota ? 'quota_exceeded' : 'storage_error', message: String(e.message || e) };
  }
  const back = store.getItem(args.key);
  if (back !== args.value) return { status: 'not_persisted', message: 'the value read back differs from the value written' };
  return {
    status: 'ok', key: args.key, chars: codePoints(args.value), replaced: existed,
    total_keys: store.length, verified: true,
  };
};
