// value.js: TW.convert turns any JS value into JSON-safe data for
// execute_js results. Type checks avoid instanceof so values from other
// realms (iframes, isolated worlds) convert the same way.

const MAX_ITEMS = 200;
const MAX_KEYS = 1000;
const MAX_DEPTH = 6;

function typeTag(v) {
  // Only cross-origin windows refuse to be inspected.
  try { return Object.prototype.toString.call(v).slice(8, -1); } catch (e) { return 'Window'; }
}

function isNode(v) {
  return typeof v.nodeType === 'number' && typeof v.nodeName === 'string';
}

// "<button#go.primary> \"Submit\"", "#text \"hi\"", "#document https://…".
function nodeLabel(n) {
  if (n.nodeType === 1) {
    const classes = [...n.classList].slice(0, 3).map(c => '.' + c).join('');
    const head = '<' + n.localName + (n.id ? '#' + n.id : '') + classes + '>';
    const text = clip(collapse(n.textContent), 40);
    return text ? head + ' "' + text + '"' : head;
  }
  if (n.nodeType === 3) return '#text "' + clip(collapse(n.data), 40) + '"';
  if (n.nodeType === 9) return '#document ' + n.URL;
  return n.nodeName;
}

function convertError(e) {
  const stack = typeof e.stack === 'string' ? e.stack.split('\n').slice(0, 5).join('\n') : '';
  return { name: String(e.name), message: String(e.message), stack };
}

function moreMarker(total) {
  return typeof total === 'number' ? '[… ' + (total - MAX_ITEMS) + ' more items]' : '[… more items]';
}

// Up to MAX_ITEMS converted items of an iterable, then a marker if longer.
function convertIterable(v, depth, seen) {
  const out = [];
  if (Array.isArray(v) || ArrayBuffer.isView(v) || typeof v.length === 'number') {
    const n = Math.min(v.length, MAX_ITEMS);
    for (let i = 0; i < n; i++) out.push(convertValue(v[i], depth + 1, seen));
    if (v.length > MAX_ITEMS) out.push(moreMarker(v.length));
    return out;
  }
  const it = v[Symbol.iterator]();
  for (let step = it.next(); !step.done; step = it.next()) {
    if (out.length === MAX_ITEMS) { out.push(moreMarker(typeof v.size === 'number' ? v.size : null)); break; }
    out.push(convertValue(step.value, depth + 1, seen));
  }
  return out;
}

function convertObject(v, depth, seen) {
  const out = {};
  const keys = Object.keys(v);
  const n = Math.min(keys.length, MAX_KEYS);
  for (let i = 0; i < n; i++) {
    let item;
    try { item = v[keys[i]]; } catch (e) { out[keys[i]] = '[Threw: ' + (e && e.message) + ']'; continue; }
    out[keys[i]] = convertValue(item, depth + 1, seen);
  }
  if (keys.length > MAX_KEYS) out['…'] = (keys.length - MAX_KEYS) + ' more keys';
  return out;
}

// `seen` holds the objects on the current path, to spot cycles.
function convertValue(v, depth, seen) {
  switch (typeof v) {
    case 'undefined': return null;
    case 'number': return Number.isFinite(v) ? v : null;
    case 'bigint': return v.toString() + 'n';
    case 'symbol': return v.toString();
    case 'function': return '[Function ' + (v.name || 'anonymous') + ']';
    case 'string': case 'boolean': return v;
  }
  if (v === null) return null;
  if (seen.has(v)) return '[Circular]';
  if (depth > MAX_DEPTH) return '[MaxDepth]';
  const tag = typeTag(v);
  if (tag === 'Error' || tag === 'DOMException' || v instanceof Error) return convertError(v);
  if (tag === 'Date') return isNaN(v.getTime()) ? null : v.toISOString();
  if (tag === 'RegExp') return String(v);
  if (tag === 'Promise') return '[Promise]';
  if (tag === 'Window' || v.window === v) {
    try { return '[Window ' + v.location.href + ']'; } catch (e) { return '[Window cross-origin]'; }
  }
  if (isNode(v)) return nodeLabel(v);
  seen.add(v);
  try {
    if (tag === 'Map') {
      const pairs = [];
      for (const [k, val] of v) {
        if (pairs.length === MAX_ITEMS) { pairs.push(moreMarker(v.size)); break; }
        pairs.push([convertValue(k, depth + 2, seen), convertValue(val, depth + 2, seen)]);
      }
      return { __map__: pairs };
    }
    if (typeof v[Symbol.iterator] === 'function' && tag !== 'String') return convertIterable(v, depth, seen);
    if (tag === 'ArrayBuffer') return '[ArrayBuffer ' + v.byteLength + ' bytes]';
    return convertObject(v, depth, seen);
  } finally {
    seen.delete(v);
  }
}

TW.convert = function (value) {
  return convertValue(value, 0, new Set());
};
