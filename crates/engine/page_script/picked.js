// picked.js: run on the element a person picked, in its own document's main world
// (`Runtime.callFunctionOn`), before tabwire's world is entered: where the element is
// (a CSS selector in its document, and the path of iframes to that document, as CSS
// selectors, for same-origin frames), its box in the top viewport, and what it shows.
function describePicked() {
  // A selector that names this element alone in its document.
  function selectorOf(el) {
    if (el.id && el.ownerDocument.querySelectorAll('#' + CSS.escape(el.id)).length === 1) {
      return '#' + CSS.escape(el.id);
    }
    const steps = [];
    let node = el;
    while (node && node.nodeType === 1 && node !== node.ownerDocument.documentElement) {
      let step = node.localName;
      const parent = node.parentElement;
      if (parent) {
        const same = Array.prototype.filter.call(parent.children, function (c) { return c.localName === node.localName; });
        if (same.length > 1) step += ':nth-of-type(' + (same.indexOf(node) + 1) + ')';
      }
      steps.unshift(step);
      if (node.id && node.ownerDocument.querySelectorAll('#' + CSS.escape(node.id)).length === 1) {
        steps[0] = '#' + CSS.escape(node.id);
        break;
      }
      node = parent;
    }
    return steps.join(' > ');
  }
  const el = this.nodeType === 1 ? this : this.parentElement;
  const box = el.getBoundingClientRect();
  let x = box.left;
  let y = box.top;
  const frames = [];
  let view = el.ownerDocument.defaultView;
  let reachable = true;
  // Climb to the top document through each frame's owner element (same origin only).
  while (view && view !== view.top) {
    let owner = null;
    try { owner = view.frameElement; } catch (e) { owner = null; }
    if (!owner) { reachable = false; break; }
    const ownerBox = owner.getBoundingClientRect();
    x += ownerBox.left + owner.clientLeft;
    y += ownerBox.top + owner.clientTop;
    frames.unshift(selectorOf(owner));
    view = owner.ownerDocument.defaultView;
  }
  const text = (el.innerText || el.textContent || '').replace(/\s+/g, ' ').trim();
  return {
    selector: selectorOf(el),
    frames: frames,
    framesReachable: reachable,
    rect: { x: x, y: y, width: box.width, height: box.height },
    text: text.length > 120 ? text.slice(0, 119) + '…' : text,
    tagName: el.tagName,
  };
}
