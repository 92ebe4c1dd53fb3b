// Watching what an agent's script does to the page, for the reply's account of it: how
// many elements it changed, the largest of them as it is now, and text that appeared and
// went again while the script ran (a toast, a validation message an agent would otherwise
// never see). One watch at a time per document; reading it ends it.

let watching = null;

TW.watch_start = function () {
  if (watching) watching.observer.disconnect();
  const changed = new Set();
  const born = new Set();
  const added = [];
  const note = function (records) {
    for (const record of records) {
      if (record.type !== 'childList') {
        const el = record.target.nodeType === 1 ? record.target : record.target.parentElement;
        if (el) changed.add(el);
        continue;
      }
      for (const node of record.addedNodes) {
        const el = node.nodeType === 1 ? node : node.parentElement;
        if (el) changed.add(el);
        born.add(node);
        const text = (node.textContent || '').trim();
        // Bounded: a script that builds a whole page adds thousands of nodes.
        if (text && added.length < 500) added.push({ node, text: clip(text, 200) });
      }
      // Taking away what the script itself put there changes nothing that was there
      // before (a toast shown and removed is a transient, not a change).
      const removedOld = [...record.removedNodes].some(node => !born.has(node));
      if (removedOld && record.target.nodeType === 1) changed.add(record.target);
    }
  };
  const observer = new MutationObserver(note);
  observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  watching = { observer, changed, added, note };
  return { status: 'ok' };
};

TW.watch_read = function () {
  if (!watching) return { status: 'ok', available: false };
  const w = watching;
  watching = null;
  w.note(w.observer.takeRecords());
  w.observer.disconnect();
  const live = [...w.changed].filter(el => el.isConnected);
  // An element inside another changed element is part of that change.
  const outermost = live.filter(el => !live.some(other => other !== el && other.contains(el)));
  let largest = null;
  for (const el of outermost) {
    if (!largest || el.outerHTML.length > largest.outerHTML.length) largest = el;
  }
  const shown = document.body ? document.body.innerText : '';
  const gone = w.added.filter(a => !a.node.isConnected && !shown.includes(a.text)).map(a => a.text);
  return {
    status: 'ok',
    available: true,
    changed: outermost.length,
    largest: largest ? clip(largest.outerHTML, 400) : null,
    transients: [...new Set(gone)],
  };
};
