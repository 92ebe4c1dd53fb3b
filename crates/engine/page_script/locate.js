// locate.js: roles, accessible names, and locator resolution.
// A locator is a CSS string, or an object with exactly one of css/selector,
// role (+name), text, label, ref (from a snapshot, refs.js), xpath; options: exact, shadow
// (open host path).

// ---------- roles ----------

const HEADING_TAGS = words('h1 h2 h3 h4 h5 h6');
const SIMPLE_ROLES = {
  button: 'button', summary: 'button', textarea: 'textbox', option: 'option',
  nav: 'navigation', main: 'main', ul: 'list', ol: 'list', menu: 'list', li: 'listitem',
  table: 'table', tr: 'row', td: 'cell', dialog: 'dialog', details: 'group', fieldset: 'group',
  article: 'article', aside: 'complementary', hr: 'separator', progress: 'progressbar',
  meter: 'meter', output: 'status', p: 'paragraph', thead: 'rowgroup', tbody: 'rowgroup',
  tfoot: 'rowgroup', optgroup: 'group', blockquote: 'blockquote', dl: 'list',
};
// header/footer are landmarks only at page level, not inside sectioning content.
const SECTIONING = 'article, aside, main, nav, section';

// Input types with a simple role; hidden, file, color, date pickers… have none.
const INPUT_ROLES = {
  button: 'button', submit: 'button', reset: 'button', image: 'button', checkbox: 'checkbox',
  radio: 'radio', range: 'slider', number: 'spinbutton', search: 'searchbox', text: 'textbox',
  email: 'textbox', tel: 'textbox', url: 'textbox', password: 'textbox',
};

function inputRole(el) {
  const role = INPUT_ROLES[el.type] || null;
  // A text field with a datalist is a combobox.
  return (role === 'textbox' || role === 'searchbox') && el.hasAttribute('list') ? 'combobox' : role;
}

// Chromium makes an anchor without href (HTML's or SVG's) a link when it listens for
// clicks (click, mousedown or mouseup; not keys, not pointer events, not a listener on
// an ancestor).
// This world sees only the handlers written as attributes, not addEventListener's.
const CLICK_HANDLER_ATTRIBUTES = ['onclick', 'onmousedown', 'onmouseup'];

function hasClickHandler(el) {
  return el.localName === 'a' && CLICK_HANDLER_ATTRIBUTES.some((name) => el.hasAttribute(name));
}

function implicitRole(el) {
  const tag = el.localName;
  if (SIMPLE_ROLES[tag]) return SIMPLE_ROLES[tag];
  if (HEADING_TAGS.has(tag)) return 'heading';
  switch (tag) {
    case 'a': case 'area': return el.hasAttribute('href') || hasClickHandler(el) ? 'link' : null;
    case 'input': return inputRole(el);
    case 'select': return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
    case 'img': return el.getAttribute('alt') === '' ? 'presentation' : 'img';
    case 'th': return el.getAttribute('scope') === 'row' ? 'rowheader' : 'columnheader';
    case 'form': return explicitName(el) ? 'form' : null;
    case 'section': return explicitName(el) ? 'region' : null;
    case 'header': return el.parentElement && el.parentElement.closest(SECTIONING) ? null : 'banner';
    case 'footer': return el.parentElement && el.parentElement.closest(SECTIONING) ? null : 'contentinfo';
  }
  const ce = el.getAttribute('contenteditable');
  if (ce !== null && ce !== 'false') return 'textbox';
  return null;
}

// Explicit role attribute (first token) wins over the implicit role, except that a
// focusable element cannot be made presentational: Chromium (as ARIA says) ignores
// role="presentation" or "none" there, so jQuery UI's `<a href role="presentation">`
// tab labels stay links.
function computeRole(el) {
  const attr = el.getAttribute('role');
  if (attr && attr.trim()) {
    const role = attr.trim().split(/\s+/)[0].toLowerCase();
    if (!((role === 'presentation' || role === 'none') && isFocusable(el))) return role;
  }
  return implicitRole(el);
}

// Focusable by the browser's own rules: a tabindex, a link, an enabled form control,
// editable content.
function isFocusable(el) {
  if (el.hasAttribute('tabindex')) return true;
  const tag = el.localName;
  if ((tag === 'a' || tag === 'area') && el.hasAttribute('href')) return true;
  if (['button', 'input', 'select', 'textarea'].includes(tag)) return !el.disabled;
  const ce = el.getAttribute('contenteditable');
  return ce !== null && ce !== 'false';
}

// ---------- accessible names (a practical subset of accname) ----------

// Roles whose name comes from their content.
const NAME_FROM_CONTENT = words('button link heading cell gridcell columnheader rowheader checkbox radio switch tab ' +
  'menuitem menuitemcheckbox menuitemradio option treeitem tooltip row label legend caption');
// Inline tags: their text joins neighbours without a space.
const INLINE_TAGS = words('a abbr b bdi bdo cite code data dfn em font i kbd mark q s samp small span strong sub ' +
  'sup time u var label');
const NAME_TEXT_LIMIT = 2000;
// Containers that never lend their content to an enclosing name (Chromium's
// accessibility tree agrees): inside a name they count only by their aria-label.
const NO_NAME_FROM_CONTENT = words('alert alertdialog application article blockquote dialog feed figure group ' +
  'listbox log main marquee menu menubar navigation radiogroup status tablist tabpanel timer toolbar tree treegrid');

// Name from aria-labelledby / aria-label / title only (no content).
function explicitName(el) {
  return collapse(labelledByText(el) || el.getAttribute('aria-label') || el.getAttribute('title'));
}

function labelledByText(el) {
  const ids = el.getAttribute('aria-labelledby');
  if (!ids) return '';
  const root = el.getRootNode();
  const parts = [];
  for (const id of ids.trim().split(/\s+/)) {
    const ref = root.getElementById ? root.getElementById(id) : null;
    // Referenced nodes count even when hidden (accname 2B).
    if (ref) parts.push(ref.getAttribute('aria-label') || subtreeText(ref, true, null));
  }
  return collapse(parts.join(' '));
}

// Text an embedded control contributes to an enclosing name.
function controlText(el) {
  const tag = el.localName;
  if (tag === 'select') {
    const o = el.selectedOptions && el.selectedOptions[0];
    return o ? o.textContent : '';
  }
  if (tag === 'textarea') return el.value;
  if (tag === 'input') return el.type === 'password' || el.type === 'hidden' ? '' : el.value;
  return null;
}

// Text of an element's ::before or ::after content ('' for none): the quoted
// strings of its computed `content`, which Chromium also puts in names.
function pseudoText(el, which) {
  const c = getComputedStyle(el, which).content;
  if (!c || c === 'none' || c === 'normal' || c.indexOf('"') < 0) return '';
  let out = '';
  c.replace(/"((?:[^"\\]|\\.)*)"/g, (_, str) => { out += str.replace(/\\(.)/g, '$1'); return ''; });
  return out;
}

// An <svg>'s own <title>: its name, as for an image.
function svgTitle(el) {
  for (let k = el.firstElementChild; k; k = k.nextElementSibling) {
    if (k.localName === 'title') return k.textContent;
  }
  return null;
}

// Visible text of node's flat-tree subtree, with img alt and embedded control
// values; `skip` is a control to leave out (a label's own control).
function subtreeText(node, includeHidden, skip) {
  const own = node.nodeType === 1;
  let out = own ? pseudoText(node, '::before') : '';
  const kids = flatKids(node);
  for (let i = 0; i < kids.length && out.length < NAME_TEXT_LIMIT; i++) {
    const k = kids[i];
    if (k.nodeType === 3) { out += k.data; continue; }
    if (k.nodeType !== 1 || k === skip || SKIP_TAGS.has(k.localName)) continue;
    if (!includeHidden && (k.getAttribute('aria-hidden') === 'true' || !isVisible(k))) continue;
    const sep = INLINE_TAGS.has(k.localName) ? '' : ' ';
    let t = k.getAttribute('aria-label');
    if (!t && NO_NAME_FROM_CONTENT.has(computeRole(k))) t = '';
    else if (!t) t = k.localName === 'img' ? k.getAttribute('alt') || '' : k.localName === 'svg' ? svgTitle(k) : controlText(k);
    if (t == null) t = subtreeText(k, includeHidden, skip);
    out += sep + t + sep;
  }
  return own ? out + pseudoText(node, '::after') : out;
}

function isButtonInput(el) {
  return el.localName === 'input' && /^(button|submit|reset|image)$/.test(el.type);
}

function accessibleName(el) {
  const byRef = labelledByText(el);
  if (byRef) return byRef;
  const aria = collapse(el.getAttribute('aria-label'));
  if (aria) return aria;
  const tag = el.localName;
  if (isButtonInput(el)) {
    if (el.type === 'image') return collapse(el.alt || el.value || 'Submit');
    return collapse(el.value || (el.type === 'submit' ? 'Submit' : el.type === 'reset' ? 'Reset' : ''));
  }
  if (tag === 'input' || tag === 'textarea' || tag === 'select') {
    const fromLabels = el.labels ? collapse([...el.labels].map(l => subtreeText(l, false, el)).join(' ')) : '';
    return fromLabels || collapse(el.getAttribute('placeholder')) || collapse(el.getAttribute('title'));
  }
  if (tag === 'img') return collapse(el.getAttribute('alt') || el.getAttribute('title'));
  if (NAME_FROM_CONTENT.has(computeRole(el))) {
    // Fast path: only text inside (the common link/button case).
    const plain = !el.firstElementChild && !el.shadowRoot;
    const text = collapse(plain ? pseudoText(el, '::before') + el.textContent + pseudoText(el, '::after')
      : subtreeText(el, false, null));
    if (text) return text;
  }
  return collapse(el.getAttribute('title'));
}

// ---------- text matching ----------

// exact: whole collapsed string, case-sensitive; else case-insensitive substring.
function makeMatcher(needle, exact) {
  const want = collapse(needle);
  if (exact) return s => collapse(s) === want;
  const low = want.toLowerCase();
  return s => collapse(s).toLowerCase().includes(low);
}

// The elements `search` finds with a substring matcher: those whose text has the
// needle as written, if any do (so "More" names the summary, not a field reading
// "more"), else those that have it in any case. An exact needle is matched as written.
function byCaseFirst(needle, exact, search) {
  if (exact) return search(makeMatcher(needle, true));
  const want = collapse(needle);
  const asWritten = search(s => collapse(s).includes(want));
  return asWritten.length ? asWritten : search(makeMatcher(needle, false));
}

// Smallest visible elements whose visible text matches: post-order walk of the
// flat tree; an element is kept only if no descendant was kept.
function findByText(root, match) {
  const found = [];
  function visit(node) {
    let text = '';
    const before = found.length;
    const kids = flatKids(node);
    for (let i = 0; i < kids.length; i++) {
      const k = kids[i];
      if (k.nodeType === 3) text += k.data;
      else if (k.nodeType === 1 && !SKIP_TAGS.has(k.localName) && isVisible(k)) {
        const t = visit(k);
        text += INLINE_TAGS.has(k.localName) ? t : ' ' + t + ' ';
      }
    }
    if (node.nodeType === 1 && found.length === before && match(text)) found.push(node);
    return text;
  }
  visit(root);
  return found;
}

// ---------- label matching ----------

const LABELABLE_ROLES = words('textbox searchbox combobox checkbox radio switch slider spinbutton listbox');

function isLabelable(el) {
  const tag = el.localName;
  if (tag === 'input') return el.type !== 'hidden' && !isButtonInput(el);
  if (tag === 'textarea' || tag === 'select') return true;
  return LABELABLE_ROLES.has(computeRole(el));
}

// Every text that labels a control: <label>s, aria-label(ledby), placeholder.
function labelTexts(el) {
  const out = [];
  if (el.labels) for (const l of el.labels) out.push(subtreeText(l, false, el));
  out.push(labelledByText(el), el.getAttribute('aria-label') || '', el.getAttribute('placeholder') || '');
  return out.filter(t => t.trim());
}

// ---------- locator parsing and resolution ----------

const PRIMARY_KEYS = ['css', 'selector', 'role', 'text', 'label', 'ref', 'xpath'];

function invalid(message) {
  return { status: 'invalid_selector', message };
}

// A ref as a read writes it, the whole string: `e12` (lean) or `ref_12` (exact). No HTML
// tag is spelled so, so a CSS string of this form names the ref's element (the engine's
// tree.rs `ref_number` reads it the same way).
const REF_FORM = /^(e|ref_)\d+$/;

// Normalises a locator to {kind, value, name, exact, shadow} or an error.
function parseLocator(loc) {
  if (typeof loc === 'string' && REF_FORM.test(loc.trim())) return { kind: 'ref', value: loc.trim(), shadow: [] };
  if (typeof loc === 'string') return loc.trim() ? { kind: 'css', value: loc, shadow: [] } : invalid('empty CSS selector');
  if (!loc || typeof loc !== 'object' || Array.isArray(loc)) return invalid('locator must be a CSS string or an object');
  if (loc.frame != null) return invalid('frame paths are resolved by the engine');
  const keys = PRIMARY_KEYS.filter(k => loc[k] != null);
  if (keys.length !== 1) {
    return invalid(keys.length ? 'locator has more than one primary key (' + keys.join(', ') + ')'
      : 'locator needs one of css, role, text, label, ref (got ' + (Object.keys(loc).join(', ') || 'nothing') + ')');
  }
  const kind = keys[0] === 'selector' ? 'css' : keys[0];
  const value = loc[keys[0]];
  if (typeof value !== 'string' || !value.trim()) return invalid(keys[0] + ' must be a non-empty string');
  const shadow = loc.shadow == null ? [] : loc.shadow;
  if (!Array.isArray(shadow) || shadow.some(s => typeof s !== 'string')) return invalid('shadow must be an array of CSS strings');
  if (loc.name != null && typeof loc.name !== 'string') return invalid('name must be a string');
  return { kind, value, name: loc.name, exact: loc.exact === true, shadow };
}

function badCss(sel) {
  return invalid("invalid CSS selector '" + sel + "'");
}

// Steps through the shadow host path, returning the root to search in.
function resolveRoot(shadow) {
  let root = document;
  for (const sel of shadow) {
    let host;
    try { host = root.querySelector(sel); } catch (e) { return { error: badCss(sel) }; }
    if (!host) return { error: { status: 'not_found', message: "shadow host '" + sel + "' not found" } };
    if (!host.shadowRoot) return { error: { status: 'not_found', message: "shadow host '" + sel + "' has no open shadow root" } };
    root = host.shadowRoot;
  }
  return { root };
}

// All elements a parsed locator matches, or {error}.
function queryAll(p) {
  if (p.kind === 'ref') {
    const el = elementOfRef(p.value.trim());
    if (el) return { els: [el] };
    return { error: { status: 'stale_ref', message: p.value + ' is not on the page now (the page navigated or re-rendered, or the element was removed); read the page again for fresh refs' } };
  }
  if (p.kind === 'xpath') {
    let found;
    try {
      found = document.evaluate(p.value, document, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
    } catch (e) {
      return { error: invalid("invalid XPath '" + p.value + "'") };
    }
    const els = [];
    for (let i = 0; i < found.snapshotLength; i++) {
      const n = found.snapshotItem(i);
      if (n.nodeType === 1) els.push(n);
    }
    return { els };
  }
  const r = resolveRoot(p.shadow);
  if (r.error) return r;
  const root = r.root;
  if (p.kind === 'css') {
    try { return { els: [...root.querySelectorAll(p.value)] }; } catch (e) { return { error: badCss(p.value) }; }
  }
  if (p.kind === 'text') {
    const start = root === document ? document.documentElement : root;
    return { els: start ? byCaseFirst(p.value, p.exact, match => findByText(start, match)) : [] };
  }
  const els = [];
  if (p.kind === 'role') {
    const role = p.value.trim().toLowerCase();
    const withRole = [];
    walkDeep(root, el => {
      if (computeRole(el) === role && isAccessible(el)) withRole.push(el);
    });
    if (!p.name) return { els: withRole };
    return { els: byCaseFirst(p.name, p.exact, match => withRole.filter(el => match(accessibleName(el)))) };
  } else {
    const match = makeMatcher(p.value, p.exact);
    walkDeep(root, el => {
      if (isLabelable(el) && isAccessible(el) && labelTexts(el).some(match)) els.push(el);
    });
  }
  return { els };
}

function describeLocator(loc) {
  return typeof loc === 'string' ? loc : JSON.stringify(loc);
}

// resolveLocator(locator) → {el} or {status, message, count?, candidates?}.
function resolveLocator(loc) {
  const p = parseLocator(loc);
  if (p.status) return p;
  const r = queryAll(p);
  if (r.error) return r.error;
  const n = r.els.length;
  if (n === 1) return { el: r.els[0] };
  if (n === 0) return { status: 'not_found', message: 'no element matches ' + describeLocator(loc), count: 0 };
  return {
    status: 'ambiguous',
    message: n + ' elements match ' + describeLocator(loc) + '; narrow the locator',
    count: n,
    candidates: r.els.slice(0, 5).map(describe),
  };
}

// Compact, JSON-safe descriptor of an element (never a field's value).
function describe(el) {
  const d = { tag: el.localName };
  if (el.id) d.id = el.id;
  const name = accessibleName(el);
  if (name) d.name = clip(name, 80);
  const role = computeRole(el);
  if (role) d.role = role;
  if (el.localName === 'input') d.type = el.type;
  const text = collapse(el.textContent.slice(0, 400));
  if (text && text !== name) d.text = clip(text, 60);
  d.selector = uniqueSelector(el);
  const path = hostPath(el);
  if (path.length) d.shadow = path;
  return d;
}

// Returns the element itself (the engine calls this with returnByValue:false).
TW.element = function (args) {
  const r = resolveLocator(args && args.locator);
  return r.el || r;
};
