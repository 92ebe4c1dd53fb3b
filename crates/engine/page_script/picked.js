// picked.js: run on the element a person picked (and on each iframe on the way from it
// up to the top document), in its own document's main world (`Runtime.callFunctionOn`):
// a CSS selector that names it in its document, its box, and what it shows. Which
// frame holds which document is read over CDP, which sees past cross-origin lines.
function describePicked() {
  // A selector that names this element alone in its own root (its document, or the
  // shadow root it is in).
  function selectorOf(el) {
    const root = el.getRootNode();
    if (el.id && root.querySelectorAll('#' + CSS.escape(el.id)).length === 1) {
      return '#' + CSS.escape(el.id);
    }
    const steps = [];
    let node = el;
    while (node && node.nodeType === 1 && node !== root.documentElement) {
      let step = node.localName;
      const parent = node.parentElement;
      const siblings = parent ? parent.children : (node.parentNode ? node.parentNode.children : []);
      const same = Array.prototype.filter.call(siblings, function (c) { return c.localName === node.localName; });
      if (same.length > 1) step += ':nth-of-type(' + (same.indexOf(node) + 1) + ')';
      steps.unshift(step);
      if (node.id && root.querySelectorAll('#' + CSS.escape(node.id)).length === 1) {
        steps[0] = '#' + CSS.escape(node.id);
        break;
      }
      node = parent;
    }
    return steps.join(' > ');
  }
  let el = this.nodeType === 1 ? this : this.parentElement;
  // The picking panel's own Cancel button: the person called it off.
  const panelHost = el.getRootNode().host;
  if (panelHost && panelHost.localName === 'tabwire-picker') return { cancelled: true };
  // Inside a closed shadow root the tools cannot reach it: its outermost closed host
  // stands for it.
  for (let root = el.getRootNode(); root.host; root = root.host.getRootNode()) {
    if (root.host.shadowRoot !== root) el = root.host;
  }
  // The open shadow hosts around it, outermost first (a locator's `shadow` path).
  const shadow = [];
  for (let root = el.getRootNode(); root.host; root = root.host.getRootNode()) {
    shadow.unshift(selectorOf(root.host));
  }
  const box = el.getBoundingClientRect();
  const text = (el.innerText || el.textContent || '').replace(/\s+/g, ' ').trim();
  return {
    selector: selectorOf(el),
    shadow: shadow,
    // In this document's own viewport; tabwire adds each frame's offset on the way up.
    rect: { x: box.left, y: box.top, width: box.width, height: box.height },
    // The border of an iframe, which its document starts inside of.
    clientLeft: el.clientLeft,
    clientTop: el.clientTop,
    text: text.length > 120 ? text.slice(0, 119) + '…' : text,
    tagName: el.tagName,
  };
}
