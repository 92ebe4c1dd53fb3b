// pick.js: the panel that asks a person to point at elements (the browser's own inspect
// mode takes the click; see page/pick.rs), and minting a ref for what they picked.

// The panel: which element to click now, and what comes after. It lets every click
// through (pointer-events: none), so the click lands on the page underneath, except on
// its Cancel button: a click there ends the picking (page/pick.rs tells it from a pick
// by where it landed). Its host is a custom element with an open shadow root, styled
// apart from the page.
TW.pick_panel = function (args) {
  let host = document.querySelector('tabwire-picker');
  if (!host) {
    host = document.createElement('tabwire-picker');
    host.attachShadow({ mode: 'open' });
    (document.body || document.documentElement).appendChild(host);
  }
  const items = args.items || [];
  const current = args.current || 0;
  const root = host.shadowRoot;
  root.textContent = '';
  const style = document.createElement('style');
  style.textContent =
    ':host { all: initial; position: fixed; top: 12px; right: 12px; z-index: 2147483647; pointer-events: none; }' +
    '.panel { font: 14px/1.4 system-ui, sans-serif; color: #111; background: #fffbe6; border: 2px solid #e0a800;' +
    ' border-radius: 8px; padding: 10px 14px; max-width: 320px; box-shadow: 0 4px 16px rgba(0,0,0,.25); }' +
    '.step { font-weight: 600; } .done { color: #777; text-decoration: line-through; } .hint { color: #555; }' +
    ' button { pointer-events: auto; margin-top: 8px; font: inherit; cursor: pointer; }';
  const panel = document.createElement('div');
  panel.className = 'panel';
  const step = document.createElement('div');
  step.className = 'step';
  step.textContent = 'Click ' + (current + 1) + ' of ' + items.length + ': ' + (items[current] ? items[current].name : '');
  panel.appendChild(step);
  if (items[current] && items[current].description) {
    const hint = document.createElement('div');
    hint.className = 'hint';
    hint.textContent = items[current].description;
    panel.appendChild(hint);
  }
  items.forEach(function (item, i) {
    if (i === current) return;
    const line = document.createElement('div');
    line.className = i < current ? 'done' : '';
    line.textContent = (i + 1) + '. ' + item.name;
    panel.appendChild(line);
  });
  const cancel = document.createElement('button');
  cancel.type = 'button';
  cancel.textContent = 'Cancel';
  panel.appendChild(cancel);
  root.appendChild(panel);
  return { status: 'ok' };
};

// Takes the panel away.
TW.pick_panel_remove = function () {
  const host = document.querySelector('tabwire-picker');
  if (host) host.remove();
  return { status: 'ok' };
};

// The ref of the element a locator names in this document, handing out a new one
// (from at least `base`) if it has none; and the next number this document would give.
TW.ref_of = function (args) {
  const r = resolveLocator(args && args.locator);
  if (!r.el) return r;
  const ref = refFor(r.el, args.base || 1);
  return { status: 'ok', ref: ref, next: nextRefNumber() };
};
