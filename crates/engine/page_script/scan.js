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
      lines.push(html ? '<iframe' + (src ? attr('src', src, 300) : '') + (name ? attr('name', name) : '') + '></iframe>'
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
    if (el.id) s += attr('id', el.id);
    if (el.name) s += attr('name', el.name);
    if (tag === 'input' && type !== 'checkbox' && type !== 'radio' && el.value) {
      s += attr('value', type === 'password' ? '•••' : el.value, 200);
    }
    if (tag === 'select' && el.value) s += attr('value', el.value);
    const ph = el.getAttribute('placeholder');
    if (ph) s += attr('placeholder', ph);
    if (el.checked) s += ' checked';
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
      const al = el.getAttribute('aria-label');
      if (al) s += attr('aria-label', al);
    }
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

// ---------- observation: interactive targets and frames ----------

const TARGET_SEL = 'a[href], area[href], ' + CLICK_HANDLER_ATTRIBUTES.map(name => 'a[' + name + '], ').join('') +
  'button, input:not([type=hidden]), select, textarea, summary, canvas, ' +
  'iframe, frame, [contenteditable]:not([contenteditable=false]), select[multiple] > option, ' +
  'select[multiple] > optgroup > option, select[size] > option, select[size] > optgroup > option, ' +
  ['button', 'link', 'checkbox', 'radio', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option',
    'switch', 'textbox', 'searchbox', 'combobox', 'listbox', 'slider', 'spinbutton', 'treeitem']
    .map(r => '[role=' + r + ']').join(', ');

// Options of a <select> shown as a list box can be clicked; those of a
// drop-down select are chosen through the select itself.
function dropdownOption(el) {
  if (el.localName !== 'option' || el.hasAttribute('role')) return false;
  const sel = el.closest('select');
  return !sel || !(sel.multiple || sel.size > 1);
}

function cssLocator(el) {
  const loc = { css: uniqueSelector(el) };
  const path = hostPath(el);
  if (path.length) loc.shadow = path;
  return loc;
}

// How many accessible elements have each wanted role + exact name: a
// {role, name, exact} locator is only offered when its count is 1. Names are
// compared before the (dearer) accessibility check.
function roleNameCounts(wanted) {
  const roles = new Set([...wanted].map(k => k.split('\u0000')[0]));
  const counts = new Map();
  walkDeep(document, el => {
    const role = computeRole(el);
    if (!roles.has(role)) return;
    const key = role + '\u0000' + accessibleName(el);
    if (wanted.has(key) && isAccessible(el)) counts.set(key, (counts.get(key) || 0) + 1);
  });
  return counts;
}

// What the agent should do with a target, and why; tool null = leave it alone.
function recommend(el, tag, role, rect, state) {
  if (state.disabled) return [null, 'disabled'];
  if (state.inert) return [null, 'inert: outside an open modal or inside [inert]'];
  if (state.readonly) return [null, 'read-only'];
  if (tag === 'input' && el.type === 'file') {
    return el.getRootNode() === document ? ['upload_files', 'file input'] : ['unsupported', 'file input inside shadow DOM'];
  }
  if (tag === 'canvas') return ['verify_coordinate_target', 'canvas: its contents cannot be located'];
  if (!rect.width || !rect.height) return ['verify_coordinate_target', 'zero-size element'];
  if (tag === 'select') return ['select_existing_option', 'native select'];
  if (isValueField(el)) return ['page_type', el.type + ' field: type its value whole, as ' + VALUE_FORMATS[el.type]];
  if (state.editable) return ['page_type', 'editable text field'];
  return ['page_click', role || tag];
}

function frameInfo(el, box, inView) {
  let same = false;
  try { same = !!el.contentDocument; } catch (e) { same = false; }
  return {
    frame: [cssLocator(el)],
    src: el.getAttribute('src') ? el.src : '',
    name: el.getAttribute('name') || '',
    title: el.getAttribute('title') || '',
    rect: box,
    in_viewport: inView,
    same_origin: same,
  };
}

// Whether an element sits inside an item the cut list collapsed.
function insideCollapsed(el, collapsed) {
  for (let n = el; n; n = n.parentElement) if (collapsed.has(n)) return true;
  return false;
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

// The controls and frames of the page in document order, from the `skip`th on, at most
// `max`; `truncated` when more remain (the next call starts at skip + max). Controls
// inside `collapsed` items are left out, or, with `within`, only those are listed.
function observe(max, collapsed, skip, refBase, within) {
  const out = { targets: [], frames: [], truncated: false };
  if (!(max > 0)) return out;
  const picked = [];
  let seen = 0;
  walkDeep(document, el => {
    if (!el.matches(TARGET_SEL) || dropdownOption(el) || !isVisible(el)) return;
    if (within ? !insideCollapsed(el, collapsed) : collapsed.size && insideCollapsed(el, collapsed)) return;
    if (seen++ < skip) return;
    if (picked.length === max) { out.truncated = true; return false; }
    picked.push(el);
  });
  const vp = viewportSize();
  // Role + name of each target that could get a role locator.
  const keys = picked.map(el => {
    const role = computeRole(el), name = accessibleName(el);
    return role && name && name.length <= 80 && isAccessible(el) ? role + '\u0000' + name : null;
  });
  const wanted = new Set(keys.filter(Boolean));
  const counts = wanted.size ? roleNameCounts(wanted) : new Map();
  picked.forEach((el, i) => {
    const tag = el.localName;
    const r = el.getBoundingClientRect();
    const box = roundRect(r);
    const inView = r.right >= 0 && r.bottom >= 0 && r.left <= vp.w && r.top <= vp.h;
    if (tag === 'iframe' || tag === 'frame') return out.frames.push(frameInfo(el, box, inView));
    const role = computeRole(el);
    const name = accessibleName(el);
    let locator = null;
    if (keys[i] && counts.get(keys[i]) === 1) locator = { role, name, exact: true };
    const state = {
      disabled: isDisabled(el),
      readonly: isReadOnly(el),
      inert: isInert(el),
      editable: isTextField(el) || isValueField(el),
    };
    const [tool, reason] = recommend(el, tag, role, box, state);
    // Compact on purpose: every target costs the agent tokens. A role locator already
    // carries the role and name; otherwise a ref (refs.js) names the element, shorter than
    // any CSS path and as exact; a file input keeps its CSS (upload_files takes CSS).
    // Defaults (editable false, in view) are left out.
    if (!locator) locator = tag === 'input' && el.type === 'file' ? cssLocator(el) : { ref: refFor(el, refBase) };
    const t = { locator };
    if (!locator.role) {
      if (role) t.role = role; else t.tag = tag;
      if (name) t.name = clip(name, TREE_NAME_MAX);
    }
    if (tag === 'input' && el.type !== 'text') t.type = el.type;
    // Date and time inputs: the engine adds the sub-fields Chromium's tree names.
    if (tag === 'input' && SUBFIELD_TYPES.has(el.type)) t.sub = true;
    if (state.editable && !state.disabled && !state.readonly) t.editable = true;
    if (state.disabled) t.disabled = true;
    if (state.readonly) t.readonly = true;
    t.rect = [box.x, box.y, box.width, box.height];
    if (!inView) t.in_viewport = false;
    t.recommended_tool = tool;
    // The obvious reasons (a button is clicked, a text field typed into) go unsaid.
    if ((tool !== 'page_click' && tool !== 'page_type') || isValueField(el)) t.reason = reason;
    out.targets.push(t);
  });
  return out;
}

TW.scan = function (args) {
  const a = args || {};
  const html = a.text_only !== true;
  const cutOn = a.cutlist !== false;
  const maxchars = a.maxchars > 0 ? Math.floor(a.maxchars) : 35000;
  const maxTargets = a.max_targets == null ? 80 : Math.max(0, Math.floor(a.max_targets));
  // The second phase of a collapsing read: the items the cut list left out, read through
  // the same cursor, so nothing a reply collapses is out of reach.
  const phase = a.collapsed_phase === true;
  let r = renderContent(html, cutOn);
  const folded = r.collapsed;
  if (phase) r = renderContent(html, false, [...folded]);
  const total = r.content.length;
  // A continuation (the cursor a truncated reply names) starts where the last one ended.
  const start = Math.min(a.content_offset > 0 ? Math.floor(a.content_offset) : 0, total);
  let end = Math.min(start + maxchars, total);
  // End at a line break when there is one in the last half, so no tag is cut in two.
  if (end < total) {
    const lineEnd = r.content.lastIndexOf('\n', end);
    if (lineEnd > start + maxchars / 2) end = lineEnd + 1;
  }
  const truncated = end < total;
  const skip = a.targets_offset > 0 ? Math.floor(a.targets_offset) : 0;
  let content = r.content.slice(start, end);
  if (truncated) {
    content += '\n[… truncated: ' + (total - end) + ' more chars; pass the continuation cursor to read on]';
  }
  const render = renderState();
  const se = document.scrollingElement || document.documentElement;
  // BrowserTap's shape: every small scalar here is repeated at the envelope's top, so only
  // what carries news is said; the empty and the default are left out.
  const out = { content };
  const links = linksNamed(r.links, content);
  if (Object.keys(links).length) out.links = links;
  if (truncated) out.truncated = true;
  if (r.offscreen && !phase) {
    out.offscreen = r.offscreen;
    out.hint = r.offscreen + ' elements are outside the viewport; use scroll_page or their locators';
  }
  if (r.cuts.length) out.cutlist = r.cuts;
  if (phase) out.collapsed_items = folded.size;
  out.render_state = render;
  out.content_ready = render === 'ready';
  out.observation = phase
    ? observe(maxTargets, folded, skip, a.ref_base > 0 ? a.ref_base : 1, true)
    : observe(maxTargets, r.collapsed, skip, a.ref_base > 0 ? a.ref_base : 1);
  const viewport = { width: window.innerWidth, height: window.innerHeight, device_pixel_ratio: window.devicePixelRatio };
  if (window.scrollX) viewport.scroll_x = Math.round(window.scrollX);
  if (window.scrollY) viewport.scroll_y = Math.round(window.scrollY);
  if (se && se.scrollHeight > window.innerHeight) viewport.scroll_height = se.scrollHeight;
  Object.assign(out.observation, { url: location.href, title: document.title, ready_state: document.readyState, viewport });
  out.ref_next = nextRefNumber();
  const prefix = phase ? 'c' : '';
  if (truncated || out.observation.truncated) {
    out.continuation = {
      cursor: prefix + (truncated ? end : total) + ':' + (out.observation.truncated ? skip + maxTargets : skip + out.observation.targets.length + out.observation.frames.length),
      content_offset: start,
      chars_remaining: total - end,
      targets_remaining: out.observation.truncated,
    };
  } else if (!phase && folded.size) {
    // Everything shown is read; what the cut list collapsed comes next.
    out.continuation = { cursor: 'c0:0', collapsed_items: folded.size };
  }
  return out;
};
