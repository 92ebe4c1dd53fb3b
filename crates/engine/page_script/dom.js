// dom.js: low-level DOM helpers shared by the other page scripts.
// Everything here is read-only: no globals, attributes or ids are written,
// so the page cannot tell that it was inspected.

// A Set from a space-separated word list.
function words(s) {
  return new Set(s.split(' '));
}

// Elements whose contents are never rendered text.
const SKIP_TAGS = words('script style noscript template head meta link');

// checkVisibility options: also treat visibility:hidden as hidden.
const VIS_OPTS = { visibilityProperty: true };

// Collapse runs of whitespace and trim.
function collapse(s) {
  return String(s == null ? '' : s).replace(/\s+/g, ' ').trim();
}

function clip(s, n) {
  return s.length > n ? s.slice(0, n - 1) + '…' : s;
}

// Parent in the composed tree: steps from a shadow root's top to its host.
function parentDeep(node) {
  if (node.parentElement) return node.parentElement;
  const p = node.parentNode;
  return p && p.host ? p.host : null;
}

// Children in the flat (rendered) tree: a shadow host's rendered children are
// its open shadow root's; a slot renders its assigned nodes (or its fallback).
function flatKids(node) {
  if (node.shadowRoot) return node.shadowRoot.childNodes;
  if (node.localName === 'slot') {
    const assigned = node.assignedNodes();
    if (assigned.length) return assigned;
  }
  return node.childNodes;
}

// True if `inner` is `outer` or inside it, crossing shadow boundaries and
// following slot assignment.
function containsDeep(outer, inner) {
  for (let n = inner; n; n = n.assignedSlot || parentDeep(n)) {
    if (n === outer) return true;
  }
  return false;
}

// CSS visibility: display:none, visibility:hidden, content-visibility
// (closed <details>, hidden=until-found) and hidden ancestors all count.
// Zero-size elements are NOT hidden.
function isVisible(el) {
  if (!el || el.nodeType !== 1 || !el.isConnected) return false;
  const tag = el.localName;
  // Options inside a collapsed <select> have no box of their own.
  if (tag === 'option' || tag === 'optgroup') {
    const sel = el.closest('select');
    return !!sel && isVisible(sel);
  }
  if (el.checkVisibility(VIS_OPTS)) return true;
  // display:contents has no box, but its children still render.
  if (getComputedStyle(el).display !== 'contents') return false;
  const p = el.assignedSlot || parentDeep(el);
  return !p || isVisible(p);
}

// The open modal <dialog>, if any: everything outside it is inert. Looked up once per
// call (the script stays installed between calls; the page changes in between).
let modalCache;
function beginCall() {
  modalCache = undefined;
}

function openModal() {
  if (modalCache === undefined) {
    try { modalCache = document.querySelector('dialog:modal'); } catch (e) { modalCache = null; }
  }
  return modalCache;
}

// Not interactive: inert on a composed ancestor, or outside an open modal.
function isInert(el) {
  const modal = openModal();
  if (modal && !containsDeep(modal, el)) return true;
  for (let n = el; n; n = parentDeep(n)) {
    if (n.hasAttribute('inert')) return true;
  }
  return false;
}

function ariaHidden(el) {
  for (let n = el; n; n = parentDeep(n)) {
    if (n.getAttribute('aria-hidden') === 'true') return true;
  }
  return false;
}

// Visible and exposed to assistive tech: what role/label searches match.
// One ancestor walk checks both aria-hidden and inert.
function isAccessible(el) {
  if (!isVisible(el)) return false;
  const modal = openModal();
  if (modal && !containsDeep(modal, el)) return false;
  for (let n = el; n; n = parentDeep(n)) {
    if (n.getAttribute('aria-hidden') === 'true' || n.hasAttribute('inert')) return false;
  }
  return true;
}

// Calls fn(el, root) for every element under root in document order, stepping
// into each open shadow root right after its host. fn returning false stops.
function walkDeep(root, fn) {
  const all = root.querySelectorAll('*');
  for (let i = 0; i < all.length; i++) {
    const el = all[i];
    if (fn(el, root) === false) return false;
    if (el.shadowRoot && walkDeep(el.shadowRoot, fn) === false) return false;
  }
  return true;
}

// Focused element, descending through open shadow roots.
function deepActive() {
  let a = document.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  return a;
}

// Topmost element at a viewport point, descending through open shadow roots.
function deepElementFromPoint(x, y) {
  let hit = document.elementFromPoint(x, y);
  while (hit && hit.shadowRoot) {
    const inner = hit.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  return hit;
}

// The box to aim at for an element: its bounding box, unless it is an inline element
// broken over several lines (a long link in a paragraph). The middle of such a box can
// fall between the line fragments, on the paragraph around it, so the largest fragment
// is aimed at instead.
function aimRect(el) {
  const rects = el.getClientRects();
  if (rects.length < 2) return el.getBoundingClientRect();
  let best = rects[0];
  for (const r of rects) if (r.width * r.height > best.width * best.height) best = r;
  return best;
}

// Layout viewport in CSS px, excluding scrollbars.
function viewportSize() {
  const de = document.documentElement;
  if (document.compatMode === 'CSS1Compat' && de) return { w: de.clientWidth, h: de.clientHeight };
  return { w: window.innerWidth, h: window.innerHeight };
}

function roundRect(r) {
  return { x: Math.round(r.left), y: Math.round(r.top), width: Math.round(r.width), height: Math.round(r.height) };
}

// Quote a string for use inside a CSS attribute selector.
function cssString(v) {
  return '"' + v.replace(/["\\]/g, '\\$&').replace(/\n/g, '\\a ') + '"';
}

function countIn(root, sel) {
  try { return root.querySelectorAll(sel).length; } catch (e) { return -1; }
}

// Attributes that usually identify an element stably, tried in order.
const SELECTOR_ATTRS = ['data-testid', 'data-test', 'data-qa', 'name', 'aria-label', 'placeholder', 'title', 'alt', 'type'];

// A short CSS selector matching exactly `el` within its own root (document or
// shadow root): #id, tag[attr="v"], or a tag:nth-of-type path anchored at an
// id'd ancestor or the root. Queries are few because they scan the whole root.
function uniqueSelector(el) {
  const root = el.getRootNode();
  const tag = CSS.escape(el.localName);
  if (el.id && countIn(root, '#' + CSS.escape(el.id)) === 1) return '#' + CSS.escape(el.id);
  for (const a of SELECTOR_ATTRS) {
    const v = el.getAttribute(a);
    if (!v || v.length > 80) continue;
    const sel = tag + '[' + a + '=' + cssString(v) + ']';
    if (countIn(root, sel) === 1) return sel;
  }
  const parts = [];
  for (let n = el; n; n = n.parentElement) {
    if (n !== el && n.id && root.querySelectorAll('#' + CSS.escape(n.id)).length === 1) {
      parts.unshift('#' + CSS.escape(n.id));
      break;
    }
    let part = CSS.escape(n.localName);
    const parent = n.parentNode;
    if (parent && parent.nodeType !== 9) {
      let index = 0, same = 0;
      for (let s = parent.firstElementChild; s; s = s.nextElementSibling) {
        if (s.localName !== n.localName) continue;
        same++;
        if (s === n) index = same;
      }
      if (same > 1) part += ':nth-of-type(' + index + ')';
    }
    parts.unshift(part);
  }
  return parts.join(' > ');
}

// Selectors of the open shadow hosts enclosing el, outermost first, in the
// form a locator's `shadow` key expects.
function hostPath(el) {
  const path = [];
  for (let root = el.getRootNode(); root && root.host; root = root.host.getRootNode()) {
    path.unshift(uniqueSelector(root.host));
  }
  return path;
}
