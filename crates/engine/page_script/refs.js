// refs.js: element refs (`ref_N`) that a snapshot hands out and any locator can name
// (`{ref: 'ref_N'}`). The book lives on this world's global, so refs outlive one call;
// it holds elements weakly, so the page can still drop them. An element keeps its ref
// for as long as it lives. Numbers come from the engine, unique per tab across
// documents, so a ref from a document that has gone is told apart from a typo.

function refBook() {
  if (!globalThis.__tabwireRefs) {
    globalThis.__tabwireRefs = { ofElement: new WeakMap(), elementOf: new Map(), next: 1 };
  }
  return globalThis.__tabwireRefs;
}

// The element's ref, handing out a new one (from at least `base`) if it has none.
function refFor(el, base) {
  const book = refBook();
  const known = book.ofElement.get(el);
  if (known && book.elementOf.has(known)) return known;
  if (base > book.next) book.next = base;
  const ref = 'ref_' + book.next++;
  book.ofElement.set(el, ref);
  book.elementOf.set(ref, new WeakRef(el));
  return ref;
}

// The live element a ref names in this document, or null.
function elementOfRef(given) {
  // Lean replies write ref_12 as e12; both name one element.
  const ref = /^e\d+$/.test(given) ? 'ref_' + given.slice(1) : given;
  const held = refBook().elementOf.get(ref);
  const el = held && held.deref();
  if (el && el.isConnected) return el;
  if (held) refBook().elementOf.delete(ref);
  return null;
}

// The next number this document would hand out (the engine keeps the tab's count).
function nextRefNumber() {
  return refBook().next;
}

// The refs of the elements a CSS selector matches that a snapshot has handed out.
TW.refs_matching = function (args) {
  let els;
  try { els = document.querySelectorAll(args && args.css); } catch (e) { return { status: 'invalid_selector', message: String(e.message) }; }
  const book = refBook();
  return { status: 'ok', refs: [...els].map(el => book.ofElement.get(el)).filter(Boolean) };
};
