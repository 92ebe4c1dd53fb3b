// tree.js: TW.read_tree, the lean snapshot: the page as an accessibility-like outline,
// one node a line (`- role "name" [ref=ref_N]`, interactive ones with their centre
// point), indented by depth. Controls are the ones scan.js lists (TARGET_SEL); headings,
// landmarks, images with a text alternative and the page's text are kept around them,
// generic wrappers are not. Refs come from refs.js, so the same ref acts on the same
// element in any later call. Iframes are listed with a ref; the engine reads each one
// in its own document and splices its lines in below.

// Roles kept as structure when they have no control of their own to list.
const TREE_LANDMARKS = words('banner navigation main contentinfo complementary form search region dialog ' +
  'alertdialog tabpanel');
const TREE_NAMED = words('heading img figure table list tablist menu menubar toolbar radiogroup tree grid group');
// Roles whose name is their text: their text is not listed again below them.
const TREE_TEXT_ROLES = words('heading button link tab menuitem menuitemcheckbox menuitemradio option treeitem ' +
  'checkbox radio switch');
// Live regions: what they announce is their text, said as their name (`status "Saved"`).
const TREE_LIVE_ROLES = words('status alert log');
// A table's cells: a row's cells read as one line, `a | b | c`.
const TREE_CELL_ROLES = words('cell gridcell columnheader rowheader');
const TREE_NAME_MAX = 100;
const TREE_TEXT_MAX = 200;
const TREE_OPTIONS_SHOWN = 12;

// scan.js's render verdict, without its cost on the pages that need none: the full probe
// reads the whole body's text and markup, so it runs only when the document says it is
// still loading or the outline is nearly empty (what a framework's shell gives).
function treeRenderState(lines) {
  const busy = document.readyState !== 'complete' ||
    document.querySelector('[aria-busy="true"], [data-loading="true"], [data-testid*="loading" i]');
  if (!busy && lines > 3) return 'content';
  return renderProbe().state;
}

function quoteName(s, max) {
  return '"' + clip(collapse(s), max).replace(/\\/g, '\\\\').replace(/"/g, '\\"') + '"';
}

// States worth a word: what an agent acts on differently.
function treeFlags(el, role) {
  const out = [];
  if (isDisabled(el)) out.push('disabled');
  if (el.localName === 'input' && (el.type === 'checkbox' || el.type === 'radio')) {
    if (el.checked) out.push('checked');
  } else {
    const checked = el.getAttribute('aria-checked');
    if (checked === 'true' || checked === 'mixed') out.push(checked === 'true' ? 'checked' : 'mixed');
  }
  for (const [attrName, word] of [['aria-expanded', 'expanded'], ['aria-selected', 'selected'],
    ['aria-pressed', 'pressed']]) {
    if (el.getAttribute(attrName) === 'true') out.push(word);
  }
  if (el.localName === 'option' && el.selected) out.push('selected');
  if (isReadOnly(el)) out.push('readonly');
  if (el.required) out.push('required');
  if (isValueField(el) && el.type !== 'range') {
    out.push('type=' + el.type);
  } else if (role === 'textbox' || role === 'searchbox' || role === 'combobox' || role === 'spinbutton') {
    if (el.localName === 'input' && !/^(text|search|email|tel|url|password|number)$/.test(el.type)) {
      out.push('type=' + el.type);
    }
  }
  return out;
}

// A field's current value, as the user sees it (never a password).
function treeValue(el) {
  const tag = el.localName;
  if (tag === 'select') {
    const chosen = [...el.selectedOptions].map(o => collapse(o.textContent));
    const all = [...el.options].map(o => collapse(o.textContent));
    let s = chosen.length ? ' value=' + quoteName(chosen.join(', '), 80) : '';
    const shown = all.slice(0, TREE_OPTIONS_SHOWN).map(o => clip(o, 40));
    s += ' options=[' + shown.join('|') + (all.length > shown.length ? '|+' + (all.length - shown.length) : '') + ']';
    return s;
  }
  if (tag === 'input' && el.type === 'password') return el.value ? ' value="•••"' : '';
  if ((tag === 'input' && isTextField(el)) || tag === 'textarea') {
    return el.value ? ' value=' + quoteName(el.value, 80) : '';
  }
  if (isValueField(el)) return el.value ? ' value=' + quoteName(el.value, 20) : '';
  const ce = el.getAttribute('contenteditable');
  if (ce !== null && ce !== 'false') {
    const text = collapse(el.innerText);
    return text ? ' value=' + quoteName(text, 80) : '';
  }
  return '';
}

// The name an agent recognises a control by; the link's address when it has none.
function treeName(el, role) {
  const name = accessibleName(el);
  if (name) return name;
  // The attribute, not the property: an SVG <a>'s href is an object, always truthy.
  const href = el.getAttribute('href');
  if (role === 'link' && href) return href;
  return collapse(el.getAttribute('placeholder') || el.getAttribute('name') || '');
}

TW.read_tree = function (args) {
  const a = args || {};
  const interactiveOnly = a.filter === 'interactive';
  const viewportOnly = a.viewport_only !== false;
  // The engine pages the outline (a cursor reads on); this only bounds one document.
  const maxLines = a.max_lines > 0 ? a.max_lines : 100000;
  const maxDepth = typeof a.depth === 'number' && a.depth >= 0 ? a.depth : Infinity;
  let root = document.body || document.documentElement;
  if (a.focus_ref) {
    root = elementOfRef(a.focus_ref);
    if (!root) return { status: 'stale_ref', message: a.focus_ref + ' is not on the page now; read the page again for fresh refs' };
  }
  const vp = viewportSize();
  const nodes = [];
  const frames = [];
  let processed = 0, truncated = false, offscreen = 0;
  const refBase = a.ref_base > 0 ? a.ref_base : 1;

  const inView = (r) => r.bottom > 0 && r.right > 0 && r.top < vp.h && r.left < vp.w;
  const push = (depth, text, point) => {
    if (nodes.length >= maxLines) { truncated = true; return false; }
    const node = { d: interactiveOnly ? 0 : depth, s: text };
    if (point) { node.x = point.x; node.y = point.y; }
    nodes.push(node);
    return true;
  };

  // The text of a block that is not a node of its own, gathered across inline elements.
  let pending = '', pendingDepth = 0, pendingShown = true;
  const flush = () => {
    const text = collapse(pending);
    if (text && pendingShown && !interactiveOnly && push(pendingDepth, '- text ' + quoteName(text, TREE_TEXT_MAX))) {
      // The text itself, for outlines written without quotes (the lean replies).
      nodes[nodes.length - 1].v = clip(text, TREE_TEXT_MAX);
    }
    pending = '';
  };

  // An element as a line, or null when it is only a wrapper.
  function describeNode(el, role) {
    const isControl = el.matches(TARGET_SEL) && !dropdownOption(el);
    if (isControl) return { control: true, role: role || el.localName };
    // Clickable with no role: said as such, with its tag, so a model sees it can click it.
    if (!TREE_LANDMARKS.has(role) && pointerClickable(el)) {
      return { control: true, role: 'clickable ' + el.localName, clickable: true };
    }
    if (interactiveOnly) return null;
    if (!role || BORING_ROLES.has(role)) return null;
    if (TREE_LANDMARKS.has(role)) {
      // A landmark's name says which one it is ("Filters", "Search results").
      const name = accessibleName(el);
      return name ? { role, name } : { role };
    }
    if (TREE_NAMED.has(role)) {
      const name = accessibleName(el);
      return name ? { role, name } : null;
    }
    return null;
  }

  // Inside a canvas's fallback content (see visit).
  let inFallback = false;
  // How many table cells enclose the element visited: inside one, blocks are words of
  // the row's line rather than lines of their own.
  let inCell = 0;

  function visit(node, depth, textOff) {
    const kids = flatKids(node);
    for (let i = 0; i < kids.length && !truncated; i++) {
      const k = kids[i];
      if (k.nodeType === 3) {
        if (!textOff) pending += k.data;
        continue;
      }
      if (k.nodeType !== 1 || SKIP_TAGS.has(k.localName)) continue;
      processed++;
      // A canvas's fallback content is drawn by nobody but is what assistive technology
      // reads (a grid drawn on a canvas keeps its rows and cells there): read it too.
      if ((!isVisible(k) && !inFallback) || k.getAttribute('aria-hidden') === 'true') continue;
      const role = computeRole(k);
      const line = describeNode(k, role);
      // A label's text is its control's name, which the control's line already says.
      if (!line && k.localName === 'label' && k.control && isVisible(k.control)) {
        flush();
        visit(k, depth, true);
        continue;
      }
      if (!line && (TREE_CELL_ROLES.has(role) || k.localName === 'td' || k.localName === 'th')) {
        // A row is one line, its cells apart by `|` (a control in a cell keeps its own line).
        if (collapse(pending)) pending += ' | ';
        inCell++;
        visit(k, depth, textOff);
        inCell--;
        continue;
      }
      if (!line) {
        const inline = INLINE_TAGS.has(k.localName) || inCell > 0;
        if (!inline) { flush(); pendingDepth = depth; }
        if (!inline) pendingShown = !viewportOnly || inView(k.getBoundingClientRect()) || inFallback;
        // An inline tag laid out as a box of its own (a flex or grid item, display:
        // block) is a separate word on screen: "File Path" and "Untitled.ipynb" side by
        // side must not read as "File PathUntitled.ipynb".
        const boxed = inline && !textOff && !getComputedStyle(k).display.startsWith('inline');
        if (boxed) pending += ' ';
        visit(k, depth, textOff);
        if (boxed) pending += ' ';
        if (!inline) flush();
        continue;
      }
      flush();
      pendingDepth = depth;
      const r = k.getBoundingClientRect();
      const shown = !viewportOnly || inView(r) || inFallback;
      const tag = k.localName;
      if (line.control) {
        if (!shown) { offscreen++; visit(k, depth, true); continue; }
        const ref = refFor(k, refBase);
        let name = tag === 'iframe' || tag === 'frame'
          ? collapse(k.getAttribute('title') || k.getAttribute('name') || '')
          : treeName(k, line.role) || (line.clickable ? clickableName(k) : '');
        const announces = !name && TREE_LIVE_ROLES.has(line.role);
        if (announces) name = collapse(k.textContent);
        let text = '- ' + (tag === 'iframe' || tag === 'frame' ? 'iframe' : line.role);
        if (name) text += ' ' + quoteName(name, TREE_NAME_MAX);
        text += ' [ref=' + ref + ']';
        // Where to point at it; an element out of view must be scrolled to first anyway.
        const aim = aimRect(k);
        const point = inView(r) ? { x: Math.round(aim.left + aim.width / 2), y: Math.round(aim.top + aim.height / 2) } : null;
        const tail = treeValue(k) + treeFlags(k, line.role).map(f => ' ' + f).join('');
        if (!push(depth, text, point)) return;
        Object.assign(nodes[nodes.length - 1], { t: tail, r: ref, role: line.role, name: clip(name, TREE_NAME_MAX) });
        if (isDisabled(k)) nodes[nodes.length - 1].off = true;
        // Date and time inputs: the engine adds the sub-fields Chromium's tree names.
        if (tag === 'input' && SUBFIELD_TYPES.has(k.type)) nodes[nodes.length - 1].sub = true;
        if (tag === 'iframe' || tag === 'frame') {
          frames.push({ ref, index: nodes.length - 1, depth: depth + 1 });
          continue;
        }
        if (depth < maxDepth) {
          const outer = inFallback;
          if (tag === 'canvas') inFallback = true;
          // A clickable named by its words has said them.
          const saidItsText = (line.clickable && !k.getAttribute('title')) || announces;
          visit(k, depth + 1, TREE_TEXT_ROLES.has(line.role) || tag === 'select' || saidItsText);
          inFallback = outer;
        }
        pendingDepth = depth;
        continue;
      }
      let childDepth = depth;
      if (shown && depth < maxDepth) {
        let text = '- ' + line.role;
        if (line.name) text += ' ' + quoteName(line.name, TREE_NAME_MAX);
        if (!push(depth, text)) return;
        Object.assign(nodes[nodes.length - 1], { role: line.role, name: clip(line.name || '', TREE_NAME_MAX) });
        childDepth = depth + 1;
      }
      pendingDepth = childDepth;
      visit(k, childDepth, textOff || TREE_TEXT_ROLES.has(line.role));
      flush();
      pendingDepth = depth;
    }
  }

  pendingShown = !viewportOnly || inView(root.getBoundingClientRect());
  visit(root, 0, false);
  flush();
  return {
    status: 'ok',
    title: document.title,
    url: location.href,
    nodes,
    frames,
    viewport: { width: window.innerWidth, height: window.innerHeight, dpr: window.devicePixelRatio },
    processed,
    offscreen,
    truncated,
    ref_next: nextRefNumber(),
    // Whether the document is done rendering: a read of a shell or a page still loading
    // says so, so an agent waits rather than trusting an empty outline.
    render_state: treeRenderState(nodes.length),
  };
};
