// act.js: the page half of actions: aiming clicks, focusing fields, scrolling,
// probing for conditions. Input events themselves are sent by the engine.

const TEXT_INPUT_TYPES = words('text search email tel url password number');

// Inputs that take a whole value in a fixed format rather than typed characters:
// Chromium draws date and time inputs as sub-fields (month, day, year…) inside its
// own shadow tree, which page script cannot reach, so the value is set as a whole.
const VALUE_FORMATS = {
  date: 'yyyy-mm-dd', time: 'hh:mm or hh:mm:ss (24-hour)', 'datetime-local': 'yyyy-mm-ddThh:mm (seconds optional)',
  month: 'yyyy-mm', week: 'yyyy-Www', color: '#rrggbb', range: 'a number',
};

// The value inputs Chromium splits into sub-fields (the engine lists them, read.rs).
const SUBFIELD_TYPES = words('date time datetime-local month week');

function isValueField(el) {
  return el.localName === 'input' && Object.prototype.hasOwnProperty.call(VALUE_FORMATS, el.type);
}

// Fields that take typed text.
function isTextField(el) {
  const tag = el.localName;
  if (tag === 'input') return TEXT_INPUT_TYPES.has(el.type);
  if (tag === 'textarea' || el.isContentEditable) return true;
  const role = computeRole(el);
  return role === 'textbox' || role === 'searchbox';
}

function isDisabled(el) {
  try { if (el.matches(':disabled')) return true; } catch (e) { /* not a form element */ }
  return el.getAttribute('aria-disabled') === 'true';
}

function isReadOnly(el) {
  const tag = el.localName;
  return ((tag === 'input' || tag === 'textarea') && el.readOnly) || el.getAttribute('aria-readonly') === 'true';
}

// Descriptor safe to show for the focused element: never a field's value.
function redacted(el) {
  if (!el) return null;
  const d = { tag: el.localName };
  if (el.localName === 'input') d.type = el.type;
  const name = el.getAttribute('name');
  if (name) d.name = name;
  if (el.id) d.id = el.id;
  const role = computeRole(el);
  if (role) d.role = role;
  // Names of text fields come from labels/placeholder, never their content.
  const label = accessibleName(el);
  if (label) d.label = clip(label, 80);
  d.editable = isTextField(el) || isValueField(el);
  // The attributes as written, for clients that read them rather than the computed role
  // and name (BrowserTap's focus report); the field's content is never among them.
  const attributes = {};
  for (const attr of ['name', 'type', 'role', 'aria-label', 'class', 'placeholder']) {
    const value = el.getAttribute(attr);
    if (value !== null) attributes[attr] = clip(value, 80);
  }
  d.attributes = attributes;
  d.content_editable = !!el.isContentEditable;
  return d;
}

function fullyInside(r, vp) {
  return r.top >= 0 && r.left >= 0 && r.bottom <= vp.h && r.right <= vp.w;
}

function round2(n) {
  return Math.round(n * 100) / 100;
}

// Whether a hit-tested element means the click reaches el: el itself, a
// (shadow-including) descendant, or a <label> whose control is el.
function hitsTarget(el, hit) {
  if (!hit) return false;
  if (containsDeep(el, hit)) return true;
  // The element's own container at its point: the element takes no pointer events
  // (pointer-events: none, as an icon or a styled slider's input has), so its container
  // gets the click a person gives there. That is the click, not a cover.
  if (containsDeep(hit, el)) return true;
  const label = hit.closest('label');
  return !!label && label.control === el;
}

function pointResult(el, x, y, extra) {
  const hit = deepElementFromPoint(x, y);
  if (hitsTarget(el, hit)) return Object.assign({ status: 'ok', x, y }, extra);
  // Nothing at all there: the point is outside what the window shows now.
  if (!hit) {
    return Object.assign({ status: 'outside_viewport', message: 'nothing is drawn at the click point', x, y }, extra);
  }
  return Object.assign({
    status: 'obscured',
    message: 'another element covers the point',
    occluded_by: hit ? describe(hit) : null,
    x, y,
  }, extra);
}

TW.click_point = function (args) {
  const a = args || {};
  const r = resolveLocator(a.locator);
  if (!r.el) return r;
  const el = r.el;
  const dropDown = dropDownOf(el);
  if (dropDown) {
    return {
      status: 'not_interactable', message: 'an option of a drop-down <select> is not drawn to click; choose it in its select',
      element: describe(el), option_of_select: describe(dropDown),
    };
  }
  if (!isVisible(el)) return { status: 'not_interactable', message: 'element is hidden', element: describe(el) };
  const rect = el.getBoundingClientRect();
  if (!rect.width || !rect.height) return { status: 'not_interactable', message: 'element has zero size', element: describe(el) };
  const vp = viewportSize();
  if (a.scroll !== false && !fullyInside(rect, vp)) {
    return scrollSettled(el, 3).then(() => aimAt(el, a, viewportSize(), true));
  }
  return aimAt(el, a, vp, false);
};

// The drop-down <select> an <option> belongs to: its options are drawn by the browser's
// own pop-up, never in the page, so no click can reach them.
function dropDownOf(el) {
  if (el.localName !== 'option' && el.localName !== 'optgroup') return null;
  const select = el.closest('select');
  return select && !select.multiple && select.size <= 1 ? select : null;
}

// The mouse events of one click, in the order a press and release send them.
const CLICK_EVENTS = ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click', 'dblclick', 'auxclick', 'contextmenu'];

// A guard for the click the engine is about to send at an element. Between aiming and
// the press the page can move under the point (a window settling its size, a bar sliding
// in, content loading above); then the press would land on whatever is there now. The
// guard watches the press: if its first event reaches the element, the rest of the click
// goes through untouched (a page may re-render on mousedown); if it reaches anything
// else, that event and the rest of the click are stopped before the page's handlers on
// the document and below see them (a page's own capture listener on window, registered
// earlier, still runs first). The engine holds the guard by reference (never a global)
// and reads what it saw with finish(), which also removes it. A press that reaches
// nothing here is neither reached nor stopped; finish() then says whether anything is at
// the point at all (if not, the press fell outside the window and went nowhere).
// Should finish() never come (the engine's call failed, the link dropped), the guard
// removes itself after `disarm_after_ms`, so it cannot stop the page's later clicks.
TW.click_guard = function (args) {
  const a = args || {};
  const r = resolveLocator(a.locator);
  if (!r.el) return null;
  // The viewport changed size since aiming: the point may no longer be on the element,
  // or soon no longer in the window. Aim again rather than press.
  const vp = viewportSize();
  if (a.viewport && (a.viewport.width !== vp.w || a.viewport.height !== vp.h)) return null;
  const el = r.el;
  const win = el.ownerDocument.defaultView;
  const seen = { reached: false, stopped: false, stopped_at: null };
  const watch = (event) => {
    if (seen.reached) return;
    const target = event.composedPath()[0];
    if (!seen.stopped && target instanceof Element && hitsTarget(el, target)) {
      seen.reached = true;
      return;
    }
    if (!seen.stopped) seen.stopped_at = target instanceof Element ? describe(target) : null;
    seen.stopped = true;
    event.preventDefault();
    event.stopImmediatePropagation();
  };
  const disarm = () => {
    for (const type of CLICK_EVENTS) win.removeEventListener(type, watch, true);
  };
  for (const type of CLICK_EVENTS) win.addEventListener(type, watch, true);
  const selfDisarm = setTimeout(disarm, typeof a.disarm_after_ms === 'number' ? a.disarm_after_ms : 30000);
  return {
    finish() {
      clearTimeout(selfDisarm);
      disarm();
      if (!seen.reached && !seen.stopped) seen.point_empty = !deepElementFromPoint(a.x, a.y);
      seen.challenge = challengeMarker(el.ownerDocument);
      // A box or radio's state after the click, as the page has it now.
      const checked = checkedState(el);
      if (checked !== null) seen.checked = checked;
      return seen;
    },
  };
};

// Whether a checkbox, radio or switch (native or ARIA) is checked; null for anything else.
// A click on a label counts for its control.
function checkedState(el) {
  const control = el.localName === 'label' && el.control ? el.control : el;
  if (control.localName === 'input' && (control.type === 'checkbox' || control.type === 'radio')) return control.checked;
  const aria = control.getAttribute && control.getAttribute('aria-checked');
  if (aria === 'true' || aria === 'false') return aria === 'true';
  return null;
}

// Whether the document is a bot check (an interstitial or a captcha widget) that a
// click alone will not get past; its kind, or null. An agent is told so it can hand the
// tab to a person instead of clicking on.
function challengeMarker(doc) {
  if (/^just a moment/i.test(doc.title || '')) return 'interstitial';
  const kinds = [
    ['#challenge-form, #challenge-running, #cf-challenge-running, [id^="cf-chl"]', 'interstitial'],
    ['iframe[src*="challenges.cloudflare.com"]', 'turnstile'],
    ['iframe[src*="hcaptcha.com"]', 'hcaptcha'],
    ['iframe[src*="/recaptcha/"], .g-recaptcha', 'recaptcha'],
  ];
  for (const [selector, kind] of kinds) {
    if (doc.querySelector(selector)) return kind;
  }
  return null;
}

// Scrolls the element into view and waits for the frame that shows it. The browser
// routes input by the compositor's hit-test data, which follows a scroll only once a
// frame is drawn, so aiming earlier can land where the page was. The viewport itself may
// still be changing size: a window just opened settling, or the bar a browser slides in
// above every page when a debugger first attaches (the extension link), which shrinks it
// over several frames. So the scroll is repeated (a bounded number of times) until the
// element is inside a viewport that kept its size across the frames waited for.
async function scrollSettled(el, attempts) {
  for (let i = 0; i < attempts; i++) {
    el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    const before = viewportSize();
    await nextFrames();
    const after = viewportSize();
    const steady = before.w === after.w && before.h === after.h;
    if (steady && fullyInside(el.getBoundingClientRect(), after)) return;
  }
}

// Resolves after two animation frames. A hidden page draws none, so there it resolves
// after 100 ms; a visible one on a loaded machine may take long to draw, and aiming
// before it has would miss, so there the bound is a generous second.
function nextFrames() {
  return new Promise(resolve => {
    requestAnimationFrame(() => requestAnimationFrame(resolve));
    setTimeout(resolve, document.visibilityState === 'hidden' ? 100 : 1000);
  });
}

function aimAt(el, a, vp, scrolled) {
  const rect = el.getBoundingClientRect();
  // Offsets are from the element's own box; without them, the middle of what is drawn.
  const aim = aimRect(el);
  const x = round2(typeof a.offset_x === 'number' ? rect.left + a.offset_x : aim.left + aim.width / 2);
  const y = round2(typeof a.offset_y === 'number' ? rect.top + a.offset_y : aim.top + aim.height / 2);
  if (x < 0 || y < 0 || x >= vp.w || y >= vp.h) {
    return {
      status: 'outside_viewport', message: 'the click point is outside the viewport',
      x, y, rect: roundRect(rect), viewport: { width: vp.w, height: vp.h }, scrolled_into_view: scrolled,
    };
  }
  const res = pointResult(el, x, y, { scrolled_into_view: scrolled });
  if (res.status !== 'ok') return res;
  res.hit_verified = true;
  res.viewport = { width: vp.w, height: vp.h };
  res.element = describe(el);
  if (isDisabled(el)) res.disabled = true;
  return res;
}

// A transform that maps the frame's content non-trivially (scale, rotate,
// skew, 3D): simple offset arithmetic would then aim wrong.
function hasOddTransform(cs) {
  if (cs.transform && cs.transform !== 'none') {
    const m = new DOMMatrixReadOnly(cs.transform);
    if (!m.is2D || m.a !== 1 || m.b !== 0 || m.c !== 0 || m.d !== 1) return true;
  }
  return (cs.scale && cs.scale !== 'none') || (cs.rotate && cs.rotate !== 'none') ||
    (cs.perspective && cs.perspective !== 'none') || (cs.zoom && cs.zoom !== '1' && cs.zoom !== 'normal');
}

TW.frame_box = function (args) {
  const r = resolveLocator(args && args.locator);
  if (!r.el) return r;
  const el = r.el;
  if (el.localName !== 'iframe' && el.localName !== 'frame') {
    return { status: 'not_a_frame', message: 'locator names a <' + el.localName + '>, not an iframe', element: describe(el) };
  }
  const rect = el.getBoundingClientRect();
  const cs = getComputedStyle(el);
  const px = v => parseFloat(v) || 0;
  const out = {
    status: 'ok',
    x: round2(rect.left + el.clientLeft + px(cs.paddingLeft)),
    y: round2(rect.top + el.clientTop + px(cs.paddingTop)),
    width: round2(el.clientWidth - px(cs.paddingLeft) - px(cs.paddingRight)),
    height: round2(el.clientHeight - px(cs.paddingTop) - px(cs.paddingBottom)),
  };
  for (let n = el; n; n = parentDeep(n)) {
    if (hasOddTransform(n === el ? cs : getComputedStyle(n))) { out.unsupported_transform = true; break; }
  }
  if (!isVisible(el)) out.hidden = true;
  const vp = viewportSize();
  const cx = rect.left + rect.width / 2, cy = rect.top + rect.height / 2;
  out.in_viewport = cx >= 0 && cy >= 0 && cx < vp.w && cy < vp.h;
  if (out.in_viewport) {
    const hit = deepElementFromPoint(cx, cy);
    if (hit && hit !== el) out.occluded_by = describe(hit);
  }
  return out;
};

TW.hit_test = function (args) {
  const a = args || {};
  const r = resolveLocator(a.locator);
  if (!r.el) return r;
  const vp = viewportSize();
  if (!(a.x >= 0 && a.y >= 0 && a.x < vp.w && a.y < vp.h)) {
    return { status: 'outside_viewport', message: 'point is outside the viewport', x: a.x, y: a.y };
  }
  return pointResult(r.el, a.x, a.y, {});
};

// The element that should receive keystrokes for el: xterm.js terminals take
// input through a hidden helper textarea; a label forwards to its control;
// text inside a contenteditable region goes to its editing host.
function typingTarget(el) {
  if (el.localName !== 'input' && el.localName !== 'textarea') {
    const term = el.closest('.xterm') || el.querySelector('.xterm');
    const helper = term && term.querySelector('.xterm-helper-textarea');
    if (helper) return helper;
  }
  if (el.localName === 'label' && el.control) return el.control;
  let host = el;
  while (host.isContentEditable && host.parentElement && host.parentElement.isContentEditable) host = host.parentElement;
  return host;
}

// Select a field's whole content so typed text replaces it.
function selectContents(el) {
  if (el.localName === 'input' || el.localName === 'textarea') {
    try { el.select(); return true; } catch (e) { /* fall through */ }
  }
  const range = document.createRange();
  range.selectNodeContents(el);
  const sel = window.getSelection();
  sel.removeAllRanges();
  sel.addRange(range);
  return true;
}

function caretToEnd(el) {
  const range = document.createRange();
  range.selectNodeContents(el);
  range.collapse(false);
  const sel = window.getSelection();
  sel.removeAllRanges();
  sel.addRange(range);
}

function focusReport(status, el, extra) {
  const active = deepActive();
  const hasFocus = active && active !== document.body && active !== document.documentElement;
  return Object.assign({
    status,
    focus_confirmed: !!el && active === el,
    active_element: hasFocus ? redacted(active) : null,
  }, extra);
}

// Gives an element keyboard focus, so the keys sent next go to it; whether it took focus
// (an element that cannot be focused leaves it where it was).
TW.focus_element = function (args) {
  const r = resolveLocator((args || {}).locator);
  if (!r.el) return r;
  r.el.focus({ preventScroll: false });
  return { status: 'ok', focused: deepActive() === r.el, element: describe(r.el) };
};

TW.focus_for_typing = function (args) {
  const before = deepActive();
  const report = focusForTyping(args || {});
  report.previous_active_element = before ? redacted(before) : null;
  return report;
};

function focusForTyping(a) {
  let el;
  if (a.locator != null) {
    const r = resolveLocator(a.locator);
    if (!r.el) return Object.assign(focusReport(r.status, null, {}), r);
    el = typingTarget(r.el);
    // A slider takes its value the way a person gives it: keys, after focus (the engine
    // presses them; an app that listens only to keys hears them).
    if (isSlider(el) && !isDisabled(el)) {
      el.focus({ preventScroll: true });
      return focusReport('ok', el, { editable: true, selected_existing: false, slider: sliderState(el) });
    }
    if (!isTextField(el) && !isValueField(el)) {
      return focusReport('not_editable', null, { message: '<' + el.localName + '> does not take typed text', element: describe(el) });
    }
    if (isDisabled(el) || isReadOnly(el)) {
      return focusReport('read_only', null, { message: 'field is ' + (isDisabled(el) ? 'disabled' : 'read-only'), element: redacted(el) });
    }
    const rect = el.getBoundingClientRect();
    if (rect.width && rect.height && !fullyInside(rect, viewportSize())) {
      el.scrollIntoView({ block: 'center', inline: 'nearest', behavior: 'instant' });
    }
    el.focus({ preventScroll: true });
  } else {
    el = deepActive();
    if (!el || el === document.body || el === document.documentElement) {
      return focusReport('no_focus', null, { message: 'nothing is focused; pass a locator' });
    }
  }
  const confirmed = deepActive() === el;
  if (isValueField(el)) {
    return focusReport('ok', el, { editable: true, selected_existing: false, value_format: VALUE_FORMATS[el.type] });
  }
  const selected = a.clear === true && confirmed && isTextField(el) && selectContents(el);
  // Focus puts an editable region's caret at its start; text typed without clearing
  // goes after what is there, as it does in a field.
  if (!selected && confirmed && el.isContentEditable) caretToEnd(el);
  return focusReport('ok', el, { editable: isTextField(el), selected_existing: !!selected });
}

// A native range input or an ARIA slider.
function isSlider(el) {
  return (el.localName === 'input' && el.type === 'range') || el.getAttribute('role') === 'slider';
}

// Where a slider stands: its value, bounds and step (an ARIA slider's step is unknown).
function sliderState(el) {
  if (el.localName === 'input') {
    const step = el.step === 'any' ? null : Number(el.step || 1);
    return { value: Number(el.value), min: Number(el.min || 0), max: Number(el.max || 100), step };
  }
  const num = (name, fallback) => {
    const v = Number(el.getAttribute(name));
    return el.hasAttribute(name) && Number.isFinite(v) ? v : fallback;
  };
  return { value: num('aria-valuenow', null), min: num('aria-valuemin', 0), max: num('aria-valuemax', 100), step: null };
}

// The focused slider's state now (after keys).
TW.slider_state = function () {
  const el = deepActive();
  if (!el || !isSlider(el)) return { status: 'focus_failed', message: 'the slider lost focus' };
  return Object.assign({ status: 'ok' }, sliderState(el));
};

// Sets a date, time, colour or range input to `value` as a whole, as picking it in the
// browser's own picker would: the page gets input and change. A value the input does not
// take (Chromium turns it into '') leaves the old one in place: `accepted` false.
TW.set_value = function (args) {
  const a = args || {};
  // Without a locator: the field focus_for_typing just focused.
  const r = a.locator == null ? { el: deepActive() } : resolveLocator(a.locator);
  if (!r.el) return Object.assign({ status: 'no_focus', message: 'nothing is focused; pass a locator' }, r);
  const el = typingTarget(r.el);
  if (!isValueField(el)) {
    return { status: 'not_editable', message: '<' + el.localName + '> does not take a whole value', element: describe(el) };
  }
  if (isDisabled(el) || isReadOnly(el)) {
    return { status: 'read_only', message: 'field is ' + (isDisabled(el) ? 'disabled' : 'read-only'), element: redacted(el) };
  }
  const want = String(a.value == null ? '' : a.value).trim();
  if (!takesValue(el.type, want)) {
    return { status: 'ok', accepted: false, format: VALUE_FORMATS[el.type], type: el.type };
  }
  const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
  const before = el.value;
  setter.call(el, want);
  // A date or time value the browser does not parse becomes ''.
  if (want !== '' && el.value === '') {
    setter.call(el, before);
    return { status: 'ok', accepted: false, format: VALUE_FORMATS[el.type], type: el.type };
  }
  el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
  el.dispatchEvent(new Event('change', { bubbles: true }));
  const out = { status: 'ok', accepted: true, value: el.value, type: el.type };
  // A range rounds to its step and stays within min and max.
  if (el.type === 'range' && Number(el.value) !== Number(want)) out.clamped = true;
  return out;
};

// Whether `want` is a value of the input's kind before it is tried (the browser turns a
// colour or a number it cannot read into a default rather than refusing it). Date and
// time inputs accept '' (cleared) and whatever the browser parses.
function takesValue(type, want) {
  if (type === 'color') return /^#[0-9a-f]{6}$/i.test(want);
  if (type === 'range') return /^-?(\d+|\d*\.\d+)([eE][-+]?\d+)?$/.test(want);
  return true;
}

TW.field_value = function (args) {
  const r = resolveLocator(args && args.locator);
  if (!r.el) return r;
  const el = r.el;
  const tag = el.localName;
  const value = tag === 'input' || tag === 'textarea' || tag === 'select' ? el.value : el.textContent;
  return { status: 'ok', value };
};

// The element that scrolls the page: the document, or when the document
// cannot scroll (app shells), the largest visible scrollable element.
function mainScroller() {
  const se = document.scrollingElement || document.documentElement;
  if (se.scrollHeight > se.clientHeight + 1) return se;
  let best = se, bestArea = 0;
  for (const el of document.querySelectorAll('*')) {
    if (el.scrollHeight <= el.clientHeight + 1 || el.clientHeight < 50) continue;
    const area = el.clientHeight * el.clientWidth;
    if (area <= bestArea) continue;
    const oy = getComputedStyle(el).overflowY;
    if (oy === 'auto' || oy === 'scroll' || oy === 'overlay') { best = el; bestArea = area; }
  }
  return best;
}

function scrollState(s) {
  const doc = s === (document.scrollingElement || document.documentElement);
  const y = doc ? window.scrollY : s.scrollTop;
  const vh = doc ? window.innerHeight : s.clientHeight;
  const out = {
    status: 'ok',
    scroll_x: Math.round(doc ? window.scrollX : s.scrollLeft),
    scroll_y: Math.round(y),
    scroll_height: s.scrollHeight,
    viewport_height: vh,
    at_top: y <= 1,
    at_bottom: y + vh >= s.scrollHeight - 2,
  };
  if (!doc) out.scroller = uniqueSelector(s);
  return out;
}

TW.scroll = function (args) {
  let to = args && args.to != null ? args.to : 'bottom';
  if (typeof to === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(to)) to = Number(to);
  const s = mainScroller();
  const from = scrollState(s).scroll_y;
  const moved = out => Object.assign(out, { scrolled_from: from, moved: out.scroll_y !== from });
  if (to === 'top' || to === 'bottom' || typeof to === 'number') {
    const y = to === 'top' ? 0 : to === 'bottom' ? s.scrollHeight : to;
    s.scrollTo({ top: y, left: s.scrollLeft, behavior: 'instant' });
    return moved(scrollState(s));
  }
  const r = resolveLocator(to);
  if (!r.el) return Object.assign(r, { selector: to });
  r.el.scrollIntoView({ block: 'center', inline: 'nearest', behavior: 'instant' });
  const out = moved(scrollState(s));
  out.element = describe(r.el);
  return out;
};

// Whether the page's visible text (including open shadow roots) contains s.
function pageHasText(s) {
  const body = document.body;
  if (!body) return false;
  const want = collapse(s);
  const has = t => t.includes(s) || collapse(t).includes(want);
  if (has(body.innerText)) return true;
  let found = false;
  walkDeep(document, el => {
    if (!el.shadowRoot) return;
    for (let k = el.shadowRoot.firstElementChild; k; k = k.nextElementSibling) {
      if (has(k.innerText || '')) { found = true; return false; }
    }
  });
  return found;
}

TW.probe = function (args) {
  const a = args || {};
  const given = ['selector', 'text', 'url_pattern'].filter(k => a[k] != null);
  if (given.length !== 1) return { status: 'invalid_selector', message: 'probe needs exactly one of a locator, text or a URL pattern' };
  if (a.selector != null) {
    const p = parseLocator(a.selector);
    if (p.status) return p;
    const q = queryAll(p);
    if (q.error) return q.error.status === 'not_found' ? { status: 'ok', matched: false } : q.error;
    return { status: 'ok', matched: q.els.length > 0 };
  }
  if (a.text != null) return { status: 'ok', matched: pageHasText(String(a.text)) };
  // A pattern is a JavaScript regex or a plain substring, both tried (a pasted URL has
  // '?' and '.' in it); one that is no regex is a substring alone.
  const href = location.href, pat = String(a.url_pattern);
  let re = null;
  try { re = new RegExp(pat); } catch (e) { re = null; }
  return { status: 'ok', matched: (re !== null && re.test(href)) || href.includes(pat) };
};

TW.readiness = function () {
  const render = renderState();
  return {
    ready_state: document.readyState,
    render_state: render,
    content_ready: render === 'ready',
    url: location.href,
    title: document.title,
  };
};

TW.active_element = function () {
  const a = deepActive();
  return a && a !== document.body && a !== document.documentElement ? redacted(a) : null;
};

// The Permissions API state of one permission for this document's origin. Run in
// tabwire's isolated world, where the page cannot replace navigator.permissions.
TW.permission_state = function (args) {
  return navigator.permissions.query({ name: args.name }).then(
    (s) => ({ status: 'ok', state: s.state }),
    (e) => ({ status: 'unsupported', message: String(e && e.message || e) })
  );
};

// What kind of field a locator names, for filling it: a drop-down or list <select>, a
// checkbox or radio (with its state), a text field, or something else.
TW.field_kind = function (args) {
  const r = resolveLocator(args && args.locator);
  if (!r.el) return r;
  const el = typingTarget(r.el);
  const tag = el.localName;
  const out = { status: 'ok', tag, element: redacted(el) };
  if (tag === 'select') out.kind = 'select';
  else if (tag === 'input' && (el.type === 'checkbox' || el.type === 'radio')) {
    out.kind = el.type;
    out.checked = el.checked;
  } else if (computeRole(el) === 'checkbox' || computeRole(el) === 'switch') {
    out.kind = 'checkbox';
    out.checked = el.getAttribute('aria-checked') === 'true';
  } else if (isTextField(el)) out.kind = 'text';
  else if (isValueField(el)) out.kind = 'value';
  else out.kind = 'other';
  if (isDisabled(el)) out.disabled = true;
  return out;
};

// Choosing options, as a user would (page_select; a fill of a <select>). A native
// <select> is set here, whole, with the input and change a user's choice fires. An ARIA
// listbox or combobox is clicked by the engine (trusted clicks, so the app's own handlers
// run); this script says what to click and reads what is selected afterwards.

// The control a locator names for choosing: a <select>, a listbox or a combobox (a label
// stands for its control).
function choiceWidget(el) {
  if (el.localName === 'label' && el.control) return el.control;
  return el;
}

function choiceKind(el) {
  if (el.localName === 'select') return 'select';
  const role = el.getAttribute('role');
  if (role === 'listbox' || role === 'combobox') return role;
  return null;
}

// An option's label (what a user reads) and value (a native option's value; an ARIA
// option's data-value or value attribute, else its label).
function nativeOption(o) {
  return { el: o, label: collapse(o.label || o.textContent), value: o.value };
}

function ariaOption(o) {
  const label = collapse(o.getAttribute('aria-label') || o.textContent);
  return { el: o, label, value: o.getAttribute('data-value') || o.getAttribute('value') || label };
}

// The option `want` names: its label exactly, then its value, then either ignoring case
// and spacing.
function matchOption(options, want) {
  const exact = collapse(want), loose = exact.toLowerCase();
  return options.find(o => o.label === exact) || options.find(o => o.value === want) ||
    options.find(o => o.label.toLowerCase() === loose) || options.find(o => o.value.toLowerCase() === loose) || null;
}

// A missing option, naming the options there are (the first 20) so the next call can
// name one.
function missingOption(want, options) {
  const labels = options.slice(0, 20).map(o => o.label);
  const more = options.length > labels.length ? ', … (' + options.length + ' in all)' : '';
  return {
    status: 'not_found',
    message: 'no option ' + JSON.stringify(want) + '; the options are: ' + labels.map(l => JSON.stringify(l)).join(', ') + more,
    missing_option: want, options: labels, option_count: options.length,
  };
}

function optionDisabled(o) {
  return o.el.localName === 'option' ? o.el.matches(':disabled') : isDisabled(o.el);
}

function disabledOption(o) {
  return { status: 'not_interactable', message: 'the option ' + JSON.stringify(o.label) + ' is disabled', option: o.label };
}

// A single-choice control asked for several options.
function oneOnly(kind, count) {
  // The caller's mistake, not the page's: the engine names the parameter.
  return { status: 'invalid_input', message: 'the ' + kind + ' takes one option, not ' + count + '; give one', count };
}

// Starts a choice: a <select> is chosen here and now (exactly the options given); a
// listbox or combobox is checked (enabled, one option if single-choice, a listbox's
// options all there) for the engine to click.
TW.choose_options = function (args) {
  const a = args || {};
  const r = resolveLocator(a.locator);
  if (!r.el) return r;
  const el = choiceWidget(r.el);
  const wants = (a.options || []).map(String);
  const kind = choiceKind(el);
  if (!kind) {
    return { status: 'not_interactable', message: '<' + el.localName + '> is not a <select>, listbox or combobox', element: describe(el) };
  }
  if (isDisabled(el)) return { status: 'not_interactable', message: 'the ' + kind + ' is disabled', element: describe(el) };
  if (kind === 'select') return chooseNative(el, wants);
  const multiple = kind === 'listbox' && el.getAttribute('aria-multiselectable') === 'true';
  if (!multiple && wants.length > 1) return oneOnly(kind, wants.length);
  if (kind === 'listbox') {
    const options = [...el.querySelectorAll('[role=option]')].map(ariaOption);
    for (const want of wants) {
      const o = matchOption(options, want);
      if (!o) return missingOption(want, options);
      if (optionDisabled(o)) return disabledOption(o);
    }
  }
  return { status: 'ok', kind, multiple, element: redacted(el) };
};

function chooseNative(el, wants) {
  if (!el.multiple && wants.length > 1) return oneOnly('select', wants.length);
  const options = [...el.options].map(nativeOption);
  const chosen = [];
  for (const want of wants) {
    const o = matchOption(options, want);
    if (!o) return missingOption(want, options);
    if (optionDisabled(o)) return disabledOption(o);
    chosen.push(o.el);
  }
  for (const o of el.options) o.selected = chosen.includes(o);
  el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
  el.dispatchEvent(new Event('change', { bubbles: true }));
  return Object.assign(chosenNow(el, []), { kind: 'select' });
}

// The listbox a combobox opens: the one it names (aria-controls, aria-owns), one inside
// it, one beside it in its wrapper (ARIA 1.1's pattern), else the one listbox shown.
function listboxOf(combo) {
  const root = combo.getRootNode();
  const byId = id => (root.getElementById ? root.getElementById(id) : document.getElementById(id));
  const named = ['aria-controls', 'aria-owns'].flatMap(attr => (combo.getAttribute(attr) || '').split(/\s+/)).filter(Boolean);
  for (const id of named) {
    const box = byId(id);
    const list = box && (box.getAttribute('role') === 'listbox' ? box : box.querySelector('[role=listbox]'));
    if (list) return list;
  }
  // A combobox that names its listbox opens that one, perhaps not rendered yet.
  if (named.length) return combo.querySelector('[role=listbox]');
  for (let up = combo, depth = 0; up && depth < 3; up = up.parentElement, depth++) {
    const near = up.querySelector('[role=listbox]');
    if (near && isVisible(near)) return near;
  }
  const shown = [...document.querySelectorAll('[role=listbox]')].filter(isVisible);
  return shown.length === 1 ? shown[0] : null;
}

// The listbox a widget chooses from, if it is shown now.
function shownListbox(el) {
  const list = el.getAttribute('role') === 'listbox' ? el : listboxOf(el);
  return list && isVisible(list) && list.querySelector('[role=option]') ? list : null;
}

// How long a just-opened listbox's options must stay as they are before an option
// missing from them is missing.
const OPTIONS_SETTLE_MS = 300;

// What the engine clicks for one option: a ref to the option (`click`), or `open` when a
// combobox's listbox is not shown (after the engine's click opens it, this is asked
// again with `wait_ms`, waiting that long for the listbox to appear). An option already
// selected in a multiple listbox is not clicked (a click would take it out).
TW.option_to_click = function (args) {
  const a = args || {};
  const r = resolveLocator(a.locator);
  if (!r.el) return r;
  const el = choiceWidget(r.el);
  const until = Date.now() + (a.wait_ms || 0);
  let count = -1, countSince = Date.now();
  const attempt = () => {
    const now = Date.now();
    const list = shownListbox(el);
    if (!list) return now < until ? null : { status: 'ok', open: true };
    const options = [...list.querySelectorAll('[role=option]')].map(ariaOption);
    const o = matchOption(options, String(a.option));
    if (!o) {
      // A list still filling in (options fetched as it opens) may bring it yet; one
      // whose options have stopped coming does not have it.
      if (options.length !== count) { count = options.length; countSince = now; }
      if (now < until && now - countSince < OPTIONS_SETTLE_MS) return null;
      return missingOption(String(a.option), options);
    }
    if (optionDisabled(o)) return disabledOption(o);
    const multiple = list.getAttribute('aria-multiselectable') === 'true';
    const selected = o.el.getAttribute('aria-selected') === 'true';
    return {
      status: 'ok', label: o.label, value: o.value,
      click: multiple && selected ? null : refFor(o.el, 0),
    };
  };
  return new Promise(resolve => {
    const poll = () => {
      const done = attempt();
      if (done) resolve(done);
      else setTimeout(poll, 30);
    };
    poll();
  });
};

// What a choice control has selected now, by label and value. A combobox whose listbox
// has closed shows its choice as its text (or its input's value); its value is the one
// of the option clicked for that label (`picked`), else the text.
TW.chosen_options = function (args) {
  const a = args || {};
  const r = resolveLocator(a.locator);
  if (!r.el) return r;
  const el = choiceWidget(r.el);
  return chosenNow(el, a.picked || []);
};

function chosenNow(el, picked) {
  const out = { status: 'ok', multiple: false, selected: [], values: [], element: redacted(el) };
  if (el.localName === 'select') {
    const now = [...el.selectedOptions].map(nativeOption);
    return Object.assign(out, { multiple: el.multiple, selected: now.map(o => o.label), values: now.map(o => o.value) });
  }
  const list = el.getAttribute('role') === 'listbox' ? el : shownListbox(el);
  if (list) {
    const now = [...list.querySelectorAll('[role=option][aria-selected=true]')].map(ariaOption);
    out.multiple = list.getAttribute('aria-multiselectable') === 'true';
    if (now.length || list === el) return Object.assign(out, { selected: now.map(o => o.label), values: now.map(o => o.value) });
  }
  const field = el.matches('input, textarea') ? el : el.querySelector('input');
  const shown = collapse(field ? field.value : el.textContent);
  if (!shown) return out;
  const known = picked.find(p => p.label === shown);
  return Object.assign(out, { selected: [shown], values: [known ? known.value : shown] });
}

// An element's box in document coordinates (CSS px), for capturing just it.
TW.element_box = function (args) {
  const r = resolveLocator(args && args.locator);
  if (!r.el) return r;
  const rect = r.el.getBoundingClientRect();
  if (!rect.width || !rect.height) return { status: 'not_interactable', message: 'the element has no size', element: describe(r.el) };
  return {
    status: 'ok', x: rect.left + window.scrollX, y: rect.top + window.scrollY,
    width: rect.width, height: rect.height,
  };
};
