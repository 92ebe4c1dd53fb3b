// scan.js: TW.scan, a compact readable rendering of the page plus a list of
// interactive targets with locators that resolve back to them.

// Tags kept in simplified HTML. Block ones start their own line.
const BLOCK_KEEP = words('h1 h2 h3 h4 h5 h6 p ul ol li form table thead tbody tfoot tr dialog nav main header ' +
  'footer section article details summary pre blockquote select option');
const INLINE_KEEP = words('a button label code td th');
// Unwrapped tags that still break lines, so their texts do not run together.
const BREAK_TAGS = words('div dl dt dd fieldset figure figcaption aside address hr legend caption center body html ' +
  'menu');
// End tags HTML lets us omit: saves characters.
const OPTIONAL_END = words('p li tr td th option thead tbody tfoot');
// Structural tags dropped again when nothing visible ended up inside them.
const DROP_IF_EMPTY = words('p ul ol li form table thead tbody tfoot tr nav main header footer section article ' +
  'blockquote pre label code h1 h2 h3 h4 h5 h6');
const STATE_ATTRS = ['aria-checked', 'aria-selected', 'aria-expanded', 'aria-pressed', 'aria-disabled'];
const BORING_ROLES = words('presentation none generic');
const CUT_MIN = 12, CUT_SHOWN = 3;
// Per tag, the attributes (as written) whose values are facts a caller reads.
const FACT_ATTRS = {
  form: ['action', 'method', 'target'], a: ['target'], label: ['for'], td: ['colspan', 'rowspan'],
  th: ['colspan', 'rowspan'],
};
// What ends a content cut short; continuation.cursor (and chars_remaining) say the rest.
const CUT_MARK = '\n[… truncated: continuation.cursor reads on]';
// Longest href written inline; longer ones become refs listed in `links`.
const LINK_INLINE_MAX = 30;

function escText(s) {
  if (!/[&<>]/.test(s)) return s;
  return s.replace(/[&<>]/g, c => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}

function attr(name, v, max) {
  return ' ' + name + '="' + escText(clip(collapse(v), max || 120)).replace(/"/g, '&quot;') + '"';
}

// Signature used to spot runs of similar siblings: tag + sorted classes.
function siblingSig(el) {
  const c = el.getAttribute('class');
  if (!c) return el.localName;
  if (!/\s/.test(c)) return el.localName + '.' + c;
  const classes = c.trim().split(/\s+/).sort().join('.');
  return classes ? el.localName + '.' + classes : el.localName;
}

// Groups of ≥ CUT_MIN same-signature children of container that read as a
// list: mostly adjacent (few runs), so layout wrappers interleaved with other
// content are not collapsed.
function cutGroups(container, sigs) {
  const stats = new Map();
  let prev = null;
  for (let k = container.firstElementChild; k; k = k.nextElementSibling) {
    const sig = siblingSig(k);
    sigs.set(k, sig);
    let st = stats.get(sig);
    if (!st) stats.set(sig, st = { count: 0, runs: 0 });
    st.count++;
    if (sig !== prev) st.runs++;
    prev = sig;
  }
  let groups = null;
  for (const [sig, st] of stats) {
    if (st.count < CUT_MIN || st.runs * 6 > st.count) continue;
    groups = groups || new Map();
    groups.set(sig, { count: st.count, seen: 0 });
  }
  return groups;
}

// Selector matching exactly the container's children with signature `sig`:
// the class selector alone would also match siblings carrying extra classes.
function cutSelector(container, sig) {
  const [tag, ...classes] = sig.split('.');
  let child = CSS.escape(tag) + classes.map(c => '.' + CSS.escape(c)).join('');
  const extra = new Set();
  for (let k = container.firstElementChild; k; k = k.nextElementSibling) {
    if (k.localName !== tag) continue;
    for (const c of k.classList) if (!classes.includes(c)) extra.add(c);
  }
  for (const c of extra) child += ':not(.' + CSS.escape(c) + ')';
  return uniqueSelector(container) + ' > ' + child;
}

// Walks the rendered flat tree once, producing simplified HTML (or text),
// the link table, cut list and offscreen count. With `only`, renders just those elements
// (the items an earlier render collapsed), one after another.
function renderContent(html, cutOn, only) {
  const lines = [], links = {}, refs = new Map(), cuts = [];
  // Items hidden by the cut list; their controls are not listed as targets either.
  const collapsed = new Set();
  const vp = viewportSize();
  let cur = '', opened = false, emitted = 0, pre = 0, inSelect = 0, inLink = 0, offscreen = 0, below = false;

  const flush = () => { const s = cur.trim(); if (s) lines.push(s); cur = ''; opened = false; };
  const put = s => { cur += s; opened = false; emitted++; };

  function text(data) {
    if (pre) {
      data.split('\n').forEach((part, i) => { if (i) flush(); if (part.trim()) put(html ? escText(part) : part); });
      return;
    }
    let t = data.replace(/\s+/g, ' ');
    if (t === ' ') { if (cur && !opened && !cur.endsWith(' ')) cur += ' '; return; }
    if (opened || !cur || cur.endsWith(' ')) t = t.trimStart();
    put(html ? escText(t) : t);
  }

  // A short href is shown as the page wrote it; a long one (over LINK_INLINE_MAX, as
  // BrowserTap draws the line) becomes a ref whose absolute URL `links` gives once.
  function linkRef(el) {
    const written = el.getAttribute('href');
    if (written.length <= LINK_INLINE_MAX) return { href: written };
    const url = el.href;
    if (!refs.has(url)) { refs.set(url, 'r' + (refs.size + 1)); links[refs.get(url)] = url; }
    return { ref: refs.get(url) };
  }

  function visitKids(node, noText) {
    const kids = flatKids(node);
    let sigs = null, groups = null;
    if (cutOn && node.nodeType === 1 && !node.shadowRoot && node.localName !== 'slot' && node.childElementCount >= CUT_MIN) {
      sigs = new Map();
      groups = cutGroups(node, sigs);
    }
    for (let i = 0; i < kids.length; i++) {
      const k = kids[i];
      if (k.nodeType === 3) { if (!noText) text(k.data); continue; }
      if (k.nodeType !== 1) continue;
      const g = groups && groups.get(sigs.get(k));
      if (g && ++g.seen > CUT_SHOWN) {
        if (g.seen === CUT_SHOWN + 1) cutLine(node, sigs.get(k), g);
        collapsed.add(k);
        continue;
      }
      visit(k);
    }
  }

  function cutLine(container, sig, g) {
    const selector = cutSelector(container, sig);
    const entry = { selector, total: g.count, shown: CUT_SHOWN };
    const path = hostPath(container);
    if (path.length) entry.shadow = path;
    cuts.push(entry);
    flush();
    lines.push('[… ' + (g.count - CUT_SHOWN) + ' more similar <' + sig.split('.')[0] +
      '> items collapsed; selector: ' + selector + ']');
  }

  function visit(el) {
    const tag = el.localName;
    if (SKIP_TAGS.has(tag) || tag === 'svg' || el.getAttribute('aria-hidden') === 'true') return;
    if (!inSelect && !el.checkVisibility(VIS_OPTS)) {
      // visibility:hidden boxes may hold visible children (but no own text);
      // display:contents has no box but renders its children.
      if (el.checkVisibility()) visitKids(el, true);
      else if (getComputedStyle(el).display === 'contents') visitKids(el, false);
      return;
    }
    if (tag === 'br') return flush();
    const atom = atomic(el, tag);
    if (atom !== null) {
      if (offscreenEl(el)) offscreen++;
      // Text-mode field tokens get a trailing space so labels do not stick to them.
      if (atom) put(!html && atom[0] === '[' ? atom + ' ' : atom);
      return;
    }
    const role = el.getAttribute('role');
    const ce = el.getAttribute('contenteditable');
    const kept = BLOCK_KEEP.has(tag) || INLINE_KEEP.has(tag) ||
      (role && !BORING_ROLES.has(role)) || (ce !== null && ce !== 'false');
    const block = BLOCK_KEEP.has(tag) || BREAK_TAGS.has(tag);
    const snap = DROP_IF_EMPTY.has(tag) ? { n: lines.length, cur, emitted } : null;
    if (block) flush();
    const wasBelow = below;
    if (kept && offscreenEl(el)) { offscreen++; below = true; }
    const ref = (tag === 'a' || tag === 'area') && el.hasAttribute('href') ? linkRef(el) : null;
    if (kept && html) { cur += '<' + tag + tagAttrs(el, tag, role, ce, ref) + '>'; opened = true; }
    if (!html && (tag === 'td' || tag === 'th') && cur.trim()) cur += ' | ';
    // In text mode buttons would otherwise run into neighbouring words.
    if (!html && tag === 'button' && cur && !cur.endsWith(' ')) cur += ' ';
    if (tag === 'pre') pre++;
    if (tag === 'select') inSelect++;
    // An anchor that handles clicks is a link without an address.
    const linkLike = Boolean(ref) || hasClickHandler(el);
    if (linkLike) inLink++;
    visitKids(el);
    if (tag === 'pre') pre--;
    if (tag === 'select') inSelect--;
    if (linkLike) inLink--;
    below = wasBelow;
    if (!html && tag === 'button') cur += ' ';
    if (kept && html && !OPTIONAL_END.has(tag)) cur = cur.trimEnd() + '</' + tag + '>';
    if (!html && ref) {
      const shown = ref.ref ? '#' + ref.ref : collapse(ref.href);
      if (shown) put(' [' + shown + ']');
    }
    if (block) flush();
    if (snap && snap.emitted === emitted) { lines.length = snap.n; cur = snap.cur; }
  }

  // Leaf elements rendered as one token: returns the token, '' for nothing,
  // or null when el is not atomic.
  function atomic(el, tag) {
    if (tag === 'input') return el.type === 'hidden' ? '' : html ? '<input' + inputAttrs(el) + '>' : fieldText(el, el.value);
    if (tag === 'textarea') {
      return html ? '<textarea' + inputAttrs(el) + '>' + escText(clip(el.value, 500)) + '</textarea>' : fieldText(el, el.value);
    }
    if (tag === 'select' && !html) {
      const o = el.selectedOptions[0];
      return fieldText(el, o ? o.textContent : '');
    }
    if (tag === 'img') {
      const alt = collapse(el.getAttribute('alt'));
      // Text mode shows alt only inside links, where it is often the only label.
      return !alt ? '' : html ? '<img' + attr('alt', alt) + '>' : inLink ? alt : '';
    }
    if (tag === 'iframe' || tag === 'frame') {
      flush();
      const src = el.getAttribute('src') ? el.src : '';
      const name = el.getAttribute('name') || '';
      const named = ['id', 'title'].map(n => el.getAttribute(n) ? attr(n, el.getAttribute(n)) : '').join('');
      lines.push(html ? '<iframe' + (src ? attr('src', src, 300) : '') + (name ? attr('name', name) : '') + named + '></iframe>'
        : '[iframe' + (name ? ' ' + name : '') + (src ? ' ' + src : '') + ']');
      emitted++;
      return '';
    }
    return null;
  }

  // Whether el lies entirely below/right of the viewport. Descendants of such
  // an element are assumed to as well, saving layout reads.
  function offscreenEl(el) {
    if (below || inSelect) return below;
    const r = el.getBoundingClientRect();
    return r.top >= vp.h || r.left >= vp.w;
  }

  // Attributes for form controls (input, textarea, select, button).
  function inputAttrs(el) {
    const tag = el.localName, type = el.type;
    let s = '';
    if (tag === 'input' && type !== 'text') s += ' type=' + type;
    // A button submits its form unless it says otherwise.
    if (tag === 'button' && type !== 'submit') s += ' type=' + type;
    if (el.id) s += attr('id', el.id);
    if (el.name) s += attr('name', el.name);
    if (tag === 'input' && type !== 'checkbox' && type !== 'radio' && el.value) {
      s += attr('value', type === 'password' ? '•••' : el.value, 200);
    }
    if (tag === 'select' && el.value) s += attr('value', el.value);
    const ph = el.getAttribute('placeholder');
    if (ph) s += attr('placeholder', ph);
    if (el.checked) s += ' checked';
    if (el.required) s += ' required';
    if (el.disabled) s += ' disabled';
    if (el.readOnly) s += ' readonly';
    if (el.multiple) s += ' multiple';
    const al = el.getAttribute('aria-label');
    if (al) s += attr('aria-label', al);
    return s;
  }

  function tagAttrs(el, tag, role, ce, ref) {
    let s = !ref ? '' : ref.ref ? ' #' + ref.ref : attr('href', ref.href);
    if (tag === 'select' || tag === 'button') s += inputAttrs(el);
    else {
      // An id is the shortest selector a caller can write back (wait_for, page_click).
      if (el.id) s += attr('id', el.id);
      const al = el.getAttribute('aria-label');
      if (al) s += attr('aria-label', al);
    }
    s += factAttrs(el, tag);
    if (role) s += attr('role', role);
    if (ce !== null && ce !== 'false') s += ' contenteditable';
    if (tag === 'option') s += (el.selected ? ' selected' : '') + (el.disabled ? ' disabled' : '');
    if (tag === 'details' && el.open) s += ' open';
    for (const a of STATE_ATTRS) {
      const v = el.getAttribute(a);
      if (v) s += attr(a, v);
    }
    return s;
  }

  // Attributes that say what acting on an element does or which control a text names:
  // where a form goes and how, a link or form opening another window, a label's field,
  // a tooltip, a cell's span.
  function factAttrs(el, tag) {
    let s = '';
    const kept = FACT_ATTRS[tag] || [];
    for (const name of kept) {
      const v = el.getAttribute(name);
      if (v && !((name === 'colspan' || name === 'rowspan') && v === '1')) s += attr(name, v);
    }
    const title = el.getAttribute('title');
    if (title && (tag === 'a' || tag === 'button' || tag === 'abbr')) s += attr('title', title);
    return s;
  }

  // Text-mode rendering of a form field: [type name: value].
  function fieldText(el, value) {
    const type = el.localName === 'input' ? el.type : el.localName;
    if (type === 'submit' || type === 'button' || type === 'reset') return '[' + (el.value || type) + ']';
    const label = el.name || el.getAttribute('placeholder') || el.getAttribute('aria-label') || '';
    const shown = type === 'password' && value ? '•••' : clip(collapse(value), 200);
    const checked = el.checked ? ' (checked)' : '';
    return '[' + type + (label ? ' ' + label : '') + (shown && type !== 'checkbox' && type !== 'radio' ? ': ' + shown : '') + checked + ']';
  }

  const start = document.body || document.documentElement;
  if (only) {
    for (const el of only) { visit(el); flush(); }
  } else if (start) {
    visit(start);
  }
  flush();
  return { content: lines.join('\n'), links, cuts, offscreen, collapsed };
}

// 'loading', 'shell' (almost no visible text and no controls: an unrendered
// SPA), or 'ready'. Stops as soon as enough visible content is seen. Links,
// media and frames count as controls: a page of just those is not a shell.
function renderState() {
  if (document.readyState === 'loading') return 'loading';
  const body = document.body;
  if (!body) return 'shell';
  let chars = 0;
  const CONTENT = /^(a|input|button|select|textarea|iframe|frame|canvas|video|img|svg)$/;
  function seen(node) {
    const kids = flatKids(node);
    for (let i = 0; i < kids.length; i++) {
      const k = kids[i];
      if (k.nodeType === 3) {
        chars += collapse(k.data).length;
        if (chars >= 20) return true;
      } else if (k.nodeType === 1 && !SKIP_TAGS.has(k.localName) && isVisible(k)) {
        if (CONTENT.test(k.localName) && k.type !== 'hidden') return true;
        if (seen(k)) return true;
      }
    }
    return false;
  }
  return seen(body) ? 'ready' : 'shell';
}

// What BrowserTap's render probe reports about the top document: whether it has a body,
// how far it has loaded, how much text and markup it holds, whether it says it is still
// loading, and the verdict drawn from those (`state`, `content_ready`).
function renderProbe() {
  const body = document.body;
  const text = body ? String(body.innerText || '').trim() : '';
  const htmlChars = body ? body.innerHTML.length : 0;
  const loading = !!document.querySelector('[aria-busy="true"], [data-loading="true"], [data-testid*="loading" i]');
  const readyState = String(document.readyState || '').toLowerCase();
  let state = 'content';
  if (!body) state = 'no_body';
  else if (readyState !== 'complete') state = 'loading';
  else if (loading) state = 'hydrating';
  // A framework's shell: a large tree and (almost) no text yet.
  else if (htmlChars >= 10000 && text.length <= 16) state = 'shell_only';
  return {
    state, content_ready: state === 'content', ready_state: readyState || null, has_body: !!body,
    text_chars: text.length, html_chars: htmlChars, loading,
    fonts: document.fonts ? document.fonts.status : null,
  };
}

// ---------- observation: interactive targets and frames ----------

// What BrowserTap lists as a target: any role, tabindex or onclick, links, form controls,
// canvases and frames. Its `targets` are exactly these, in its order.
const BTAP_TARGET_SEL = 'input, textarea, select, button, a[href], [contenteditable], [role], [tabindex], [onclick], ' +
  'canvas, iframe, frame';

// What may be a target: BrowserTap's, plus what Chromium's accessibility tree also makes
// a control (area links, anchors with click handlers, summaries, list-box options), which
// tabwire lists apart (`more_targets`) so BrowserTap's list stays as it has it.
const TARGET_SEL = BTAP_TARGET_SEL + ', area[href], summary, ' +
  CLICK_HANDLER_ATTRIBUTES.map(name => 'a[' + name + ']').join(', ') +
  ', select[multiple] > option, select[multiple] > optgroup > option, select[size] > option, ' +
  'select[size] > optgroup > option';

// Longest name a target carries (as BrowserTap clips it).
const TARGET_NAME_MAX = 160;

// Options of a <select> shown as a list box can be clicked; those of a
// drop-down select are chosen through the select itself.
function dropdownOption(el) {
  if (el.localName !== 'option' || el.hasAttribute('role')) return false;
  const sel = el.closest('select');
  return !sel || !(sel.multiple || sel.size > 1);
}

// Whether an element is listed: shown (a transparent control still takes clicks), or a
// file input, which upload_files fills however it is hidden. An element that is nothing
// but clickable (pointerClickable) is listed too.
function listable(el) {
  if (!el.matches(TARGET_SEL)) return pointerClickable(el) && isVisible(el);
  if (dropdownOption(el)) return false;
  return isVisible(el) || (el.localName === 'input' && el.type === 'file');
}

// An element a person would click though nothing in the markup says so (no role, no
// onclick, no tabindex: a listener added by script, an <svg> icon): the page shows a
// pointer cursor over it. Only the outermost such element counts, so the children of a
// pointer-cursor element (and of links and buttons, which have one) are not each listed.
function pointerClickable(el) {
  if (el.matches(TARGET_SEL)) return false;
  let style;
  try { style = getComputedStyle(el); } catch (e) { return false; }
  if (style.cursor !== 'pointer') return false;
  const parent = parentDeep(el);
  if (!parent || parent.nodeType !== 1) return true;
  if (parent.closest && parent.closest(TARGET_SEL)) return false;
  return getComputedStyle(parent).cursor !== 'pointer';
}

// A few words for a clickable element with no name of its own: its title, else its text.
function clickableName(el) {
  const titled = el.getAttribute('title') || (el.querySelector && el.querySelector('title') || {}).textContent;
  return clip(collapse(titled || el.textContent || ''), 40);
}

function cssLocator(el) {
  const loc = { css: uniqueSelector(el) };
  const path = hostPath(el);
  if (path.length) loc.shadow = path;
  return loc;
}

// Disabled itself, or inside something marked aria-disabled.
function disabledState(el) {
  if (isDisabled(el)) return true;
  for (let n = parentDeep(el); n; n = parentDeep(n)) {
    if (n.getAttribute('aria-disabled') === 'true') return true;
  }
  return false;
}

// Takes typed text, as BrowserTap's page_type counts it.
function typesText(el) {
  const tag = el.localName;
  return tag === 'textarea' || el.isContentEditable || (tag === 'input' && TEXT_INPUT_TYPES.has(el.type));
}

// What the agent should do with a target, and why (BrowserTap's words); tool null = leave
// it alone or use another way.
function recommend(el, tag, rect, s) {
  if (s.disabled) return [null, 'disabled'];
  if (s.inert) return [null, 'inert'];
  if (s.readonly) return [null, 'readonly'];
  if (tag === 'input' && el.type === 'file') {
    return el.getRootNode() === document ? ['upload_files', 'file_input'] : [null, 'file_input_shadow_unsupported'];
  }
  if (!s.visible) return [null, 'not_visible'];
  if (tag === 'canvas' || rect.width <= 0 || rect.height <= 0) return ['capture_page_screenshot', 'verify_coordinate_target'];
  if (s.editable) return ['page_type', 'editable_text'];
  if (tag === 'select') return [null, 'select_existing_option'];
  return ['page_click', 'dom_target'];
}

// One control as BrowserTap describes it, with tabwire's additions: a ref naming the very
// element, the role Chromium computes, whether it is in view, and for a date, time, colour
// or range input the format page_type takes its value in.
function describeTarget(el, refBase, vp) {
  const tag = el.localName;
  const r = el.getBoundingClientRect();
  const s = { visible: isVisible(el), disabled: disabledState(el), inert: isInert(el), readonly: isReadOnly(el) };
  s.editable = typesText(el) && s.visible && !s.disabled && !s.inert && !s.readonly;
  const [tool, reason] = recommend(el, tag, r, s);
  const t = {
    locator: cssLocator(el), tag, type: tag === 'input' ? el.type : '',
    name: clip(accessibleName(el), TARGET_NAME_MAX), role: el.getAttribute('role') || '',
    visible: s.visible, editable: s.editable, disabled: s.disabled, readonly: s.readonly, inert: s.inert,
    rect: roundRect(r), hit_test: 'not_checked', recommended_tool: tool, reason,
    ref: refFor(el, refBase),
  };
  const computed = computeRole(el);
  if (computed) t.computed_role = computed;
  if (!(r.right >= 0 && r.bottom >= 0 && r.left <= vp.w && r.top <= vp.h)) t.in_viewport = false;
  // tabwire's page_type sets these whole (act.js), where BrowserTap's only clicks.
  if (isValueField(el) && tool === 'page_click') {
    t.tabwire_tool = 'page_type';
    t.value_format = VALUE_FORMATS[el.type];
  }
  // A select, listbox or combobox: BrowserTap names no tool; tabwire's page_select chooses.
  if (!s.disabled && (tag === 'select' || t.role === 'listbox' || t.role === 'combobox')) t.tabwire_tool = 'page_select';
  // Date and time inputs: the engine adds the sub-fields Chromium's tree names.
  if (tag === 'input' && SUBFIELD_TYPES.has(el.type)) t.sub = true;
  return t;
}

// An iframe as BrowserTap lists it (its locator, the frame path that scans it, its name
// and address), with its box and whether script here can reach into it.
function describeFrame(el, vp) {
  const r = el.getBoundingClientRect();
  let same = false;
  try { same = !!el.contentDocument; } catch (e) { same = false; }
  const locator = cssLocator(el);
  const f = {
    locator, frame: [locator], name: clip(collapse(el.getAttribute('title') || el.getAttribute('name')), TARGET_NAME_MAX),
    url: el.getAttribute('src') ? el.src : '', inspected: false, rect: roundRect(r), same_origin: same,
  };
  if (!(r.right >= 0 && r.bottom >= 0 && r.left <= vp.w && r.top <= vp.h)) f.in_viewport = false;
  return f;
}

// The part of a link table that a piece of content names (`#r12`): a reply that shows
// a slice of the page gives the URLs of that slice's links, not of the whole page's.
function linksNamed(links, content) {
  const named = new Set(content.match(/#r\d+/g) || []);
  const shown = {};
  for (const key of Object.keys(links)) {
    if (named.has('#' + key)) shown[key] = links[key];
  }
  return shown;
}

// Whether BrowserTap lists it: its selector, and drawn with some opacity (a transparent
// control still takes clicks, so tabwire lists it among its own); a file input however
// it is hidden.
function btapTarget(el) {
  if (!el.matches(BTAP_TARGET_SEL)) return false;
  if (el.localName === 'input' && el.type === 'file') return true;
  return typeof el.checkVisibility !== 'function' || el.checkVisibility({ opacityProperty: true, visibilityProperty: true });
}

// The controls and frames of the page in document order (open shadow roots after their
// host), from the `skip`th on, at most `limit` of both together; `truncated` when more
// remain (the next call starts at skip + limit).
function observe(limit, skip, refBase) {
  const out = { status: limit > 0 ? 'success' : 'disabled', targets: [], frames: [], truncated: false, limit };
  if (!(limit > 0) || !document.body) return out;
  const picked = [];
  const more = [];
  let seen = 0;
  walkDeep(document, el => {
    if (!listable(el)) return;
    if (!btapTarget(el)) {
      // tabwire's own, listed with the first page of targets.
      if (skip === 0 && more.length < limit) more.push(el);
      return;
    }
    if (seen++ < skip) return;
    if (picked.length === limit) { out.truncated = true; return false; }
    picked.push(el);
  });
  const vp = viewportSize();
  for (const el of picked) {
    const frame = el.localName === 'iframe' || el.localName === 'frame';
    if (frame) out.frames.push(describeFrame(el, vp));
    else out.targets.push(describeTarget(el, refBase, vp));
  }
  // A clickable with no role has no accessible name from its content: it is named by
  // its title or words, as outlines name it.
  if (more.length) {
    out.more_targets = more.map((el) => {
      const target = describeTarget(el, refBase, vp);
      if (!target.name) target.name = clickableName(el);
      return target;
    });
  }
  return out;
}

TW.scan = function (args) {
  const a = args || {};
  const html = a.text_only !== true;
  const cutOn = a.cutlist !== false;
  const maxchars = a.maxchars >= 0 ? Math.floor(a.maxchars) : 35000;
  const maxTargets = a.max_targets == null ? 80 : Math.max(0, Math.floor(a.max_targets));
  // The second phase of a collapsing read: the items the cut list left out, read through
  // the same cursor, so nothing a reply collapses is out of reach.
  const phase = a.collapsed === true;
  let r = renderContent(html, cutOn);
  const folded = r.collapsed;
  if (phase) r = renderContent(html, false, [...folded]);
  const total = r.content.length;
  // A continuation (the cursor a truncated reply names) starts where the last one ended.
  const start = Math.min(a.content_offset > 0 ? Math.floor(a.content_offset) : 0, total);
  let end = total;
  if (total - start > maxchars) {
    // maxchars caps the content with its truncation mark (as BrowserTap's does), but
    // a reply always reads on by at least one character.
    const budget = Math.max(maxchars > 0 ? 1 : 0, maxchars - CUT_MARK.length);
    end = start + budget;
    // End at a line break when there is one in the last half, so no tag is cut in two.
    const lineEnd = r.content.lastIndexOf('\n', end - 1);
    if (lineEnd > start + budget / 2) end = lineEnd + 1;
  }
  const truncated = end < total;
  const skip = a.targets_offset > 0 ? Math.floor(a.targets_offset) : 0;
  let content = r.content.slice(start, end);
  if (truncated && maxchars > 0) content += CUT_MARK;
  const se = document.scrollingElement || document.documentElement;
  // BrowserTap's shape; of tabwire's own additions only what carries news is said.
  const out = { content };
  const links = linksNamed(r.links, content);
  if (Object.keys(links).length) out.links = links;
  if (truncated) out.truncated = true;
  const hints = [];
  // The top document's readiness, as BrowserTap probes it (a frame's scan has none).
  if (a.render === true) {
    out.render = renderProbe();
    out.render_state = out.render.state;
    out.content_ready = out.render.content_ready;
    if (!out.content_ready) {
      hints.push('The page reports render_state=' + out.render_state + ' (content not confirmed ready); ' +
        'retry scan_page or wait_for before acting on an empty or shell response.');
    }
  }
  if (r.offscreen && !phase) {
    out.outside_viewport = r.offscreen;
    hints.push(r.offscreen + ' elements are outside the viewport; use scroll_page or their locators');
  }
  if (hints.length) out.hint = hints.join(' ');
  if (r.cuts.length) out.cutlist = r.cuts;
  if (phase) out.collapsed_items = folded.size;
  const observation = observe(maxTargets, skip, a.ref_base > 0 ? a.ref_base : 1);
  const viewport = { width: window.innerWidth, height: window.innerHeight, device_pixel_ratio: window.devicePixelRatio };
  if (window.scrollX) viewport.scroll_x = Math.round(window.scrollX);
  if (window.scrollY) viewport.scroll_y = Math.round(window.scrollY);
  if (se && se.scrollHeight > window.innerHeight) viewport.scroll_height = se.scrollHeight;
  out.observation = {
    status: observation.status, url: location.href, title: document.title, ready_state: document.readyState,
    targets: observation.targets, frames: observation.frames, truncated: observation.truncated,
    limit: observation.limit, viewport, coordinate_space: 'viewport_css',
  };
  if (observation.more_targets) out.observation.more_targets = observation.more_targets;
  out.ref_next = nextRefNumber();
  // Where a read goes on (`next`); the engine writes it as the continuation's cursor.
  const nextTarget = skip + observation.targets.length + observation.frames.length;
  if (truncated || observation.truncated) {
    out.continuation = {
      next: { collapsed: phase, content_offset: truncated ? end : total, targets_offset: nextTarget },
      content_offset: start,
      chars_remaining: total - end,
      targets_remaining: observation.truncated,
    };
  } else if (!phase && folded.size) {
    // Everything shown is read; what the cut list collapsed comes next (its controls are
    // already listed: the targets go on from where they stopped).
    out.continuation = {
      next: { collapsed: true, content_offset: 0, targets_offset: nextTarget },
      collapsed_items: folded.size,
    };
  }
  return out;
};
