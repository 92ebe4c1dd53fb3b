// content.js: TW.main_content, a page's main content as text with its article
// metadata (what a reader view shows, not the menus and footers around it), and
// TW.clean_html, the page's (or an element's) HTML without scripts, styles and inline
// styling. Read-only, like everything here: the page is not changed.

// Class and id words that mark content, and those that mark chrome around it.
const CONTENT_HINT = /article|body|content|entry|main|page|post|text|blog|story|prose|markdown/i;
const CHROME_HINT = /comment|footer|footnote|masthead|menu|nav|sidebar|sponsor|share|social|promo|related|widget|banner|cookie|subscribe|newsletter|breadcrumb|pagination|advert|\bads?\b|popup|modal/i;
// Elements whose text is never main content.
const NOT_CONTENT_TAGS = words('nav aside footer form button select option script style noscript template svg ' +
  'canvas iframe dialog menu');
const NOT_CONTENT_ROLES = words('navigation complementary contentinfo banner search menu menubar dialog alert');
// Blocks that end a paragraph of the extracted text.
const PARAGRAPH_TAGS = words('p h1 h2 h3 h4 h5 h6 li blockquote pre figcaption dt dd tr table ul ol section article');

function hintWeight(el) {
  const names = (el.className && typeof el.className === 'string' ? el.className : '') + ' ' + el.id;
  let w = 0;
  if (CONTENT_HINT.test(names)) w += 25;
  if (CHROME_HINT.test(names)) w -= 25;
  return w;
}

function linkDensity(el, textLength) {
  if (!textLength) return 0;
  let linked = 0;
  // Only links count: an <a name> left open wraps whole sections in some generators.
  for (const a of el.querySelectorAll('a[href]')) linked += collapse(a.textContent).length;
  return Math.min(1, linked / textLength);
}

// Whether an element sits inside page chrome (a menu, a sidebar, comments, a footer).
function inChrome(el) {
  for (let n = el.parentElement; n && n !== document.body; n = n.parentElement) {
    if (NOT_CONTENT_TAGS.has(n.localName) || NOT_CONTENT_ROLES.has(n.getAttribute('role') || '')) return true;
    if (hintWeight(n) < 0) return true;
  }
  return false;
}

// The element holding the page's main content: paragraphs vote for their parent (and
// half for their grandparent), weighted by class hints, discounted by link density.
// The winner then grows to the ancestor that holds its sibling sections too (a
// documentation page is many sections, each of which alone looks like a winner).
function mainElement() {
  const scores = new Map();
  const vote = (el, points) => {
    if (!el || el === document.documentElement) return;
    scores.set(el, (scores.get(el) || 0) + points);
  };
  const paragraphs = [];
  for (const p of document.querySelectorAll('p, pre, blockquote, td, li, dd, div > br + br')) {
    const text = collapse(p.textContent);
    if (text.length < 25 || !isVisible(p)) continue;
    const points = 1 + (text.match(/[,，、]/g) || []).length + Math.min(Math.floor(text.length / 100), 3);
    vote(p.parentElement, points);
    if (p.parentElement) vote(p.parentElement.parentElement, points / 2);
    if (!inChrome(p)) paragraphs.push([p, text.length]);
  }
  let best = null, bestScore = 0;
  for (const [el, score] of scores) {
    if (NOT_CONTENT_TAGS.has(el.localName)) continue;
    const length = collapse(el.textContent).length;
    const adjusted = (score + hintWeight(el)) * (1 - linkDensity(el, length));
    if (adjusted > bestScore) { best = el; bestScore = adjusted; }
  }
  const landmark = document.querySelector('article, main, [role=main]');
  if (!best || collapse(best.textContent).length < 140) return landmark || document.body;
  best = grow(best, paragraphs);
  // A landmark that holds the winner and is mostly text is the page's own boundary.
  if (landmark && landmark.contains(best) && landmark !== best) {
    const length = collapse(landmark.textContent).length;
    if (length < collapse(best.textContent).length * 1.6 || linkDensity(landmark, length) < 0.3) return landmark;
  }
  return best;
}

// Climbs from `el` to the highest ancestor that holds clearly more paragraph text
// (outside page chrome) than the one below it, stopping at chrome or at an ancestor
// that is mostly links. Wrappers that add nothing are passed through.
function grow(el, paragraphs) {
  const textIn = node => {
    let sum = 0;
    for (const [p, length] of paragraphs) if (node.contains(p)) sum += length;
    return sum;
  };
  let node = el;
  let held = textIn(node);
  for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
    if (NOT_CONTENT_TAGS.has(up.localName) || hintWeight(up) < 0) break;
    if (linkDensity(up, collapse(up.textContent).length) > 0.4) break;
    const more = textIn(up);
    if (more >= held * 1.25) {
      node = up;
      held = more;
    }
  }
  return node;
}

// Text of an element as it reads: blocks on their own lines, paragraphs apart, hidden
// and non-content parts (navigation, forms, asides) left out.
function readableText(root, keepAll) {
  const out = [];
  let line = '';
  const endLine = (blank) => {
    const text = collapse(line);
    if (text) out.push(text);
    if (blank && out.length && out[out.length - 1] !== '') out.push('');
    line = '';
  };
  function visit(node) {
    for (const k of flatKids(node)) {
      if (k.nodeType === 3) { line += k.data; continue; }
      if (k.nodeType !== 1 || SKIP_TAGS.has(k.localName)) continue;
      if (!isVisible(k) || k.getAttribute('aria-hidden') === 'true') continue;
      if (!keepAll && (NOT_CONTENT_TAGS.has(k.localName) || NOT_CONTENT_ROLES.has(computeRole(k) || ''))) continue;
      if (k.localName === 'br') { endLine(false); continue; }
      if (k.localName === 'img') { const alt = collapse(k.alt); if (alt && keepAll) line += ' ' + alt + ' '; continue; }
      const inline = INLINE_TAGS.has(k.localName);
      if (!inline) endLine(false);
      visit(k);
      if (!inline) endLine(PARAGRAPH_TAGS.has(k.localName));
    }
  }
  visit(root);
  endLine(false);
  while (out.length && out[out.length - 1] === '') out.pop();
  return out.join('\n');
}

function meta(names) {
  for (const name of names) {
    const el = document.querySelector('meta[property="' + name + '"], meta[name="' + name + '"], meta[itemprop="' + name + '"]');
    const content = el && collapse(el.getAttribute('content'));
    if (content) return content;
  }
  return '';
}

function byline(main) {
  const fromMeta = meta(['author', 'article:author', 'twitter:creator']);
  if (fromMeta && !/^https?:/.test(fromMeta)) return fromMeta;
  const el = (main && main.querySelector('[rel=author], [itemprop=author], .byline, .author')) ||
    document.querySelector('[rel=author], [itemprop=author], .byline');
  return el ? clip(collapse(el.textContent), 120) : '';
}

function published() {
  const fromMeta = meta(['article:published_time', 'datePublished', 'date', 'pubdate']);
  if (fromMeta) return fromMeta;
  const time = document.querySelector('article time[datetime], main time[datetime], time[datetime]');
  return time ? time.getAttribute('datetime') : '';
}

TW.main_content = function (args) {
  const a = args || {};
  if (a.selector) {
    const r = resolveLocator(a.selector);
    if (!r.el) return r;
    return { status: 'ok', url: location.href, title: document.title, text: readableText(r.el, true) };
  }
  const main = mainElement();
  const text = readableText(main, false);
  const heading = main.querySelector('h1') || document.querySelector('h1');
  const title = meta(['og:title', 'twitter:title']) || (heading && collapse(heading.textContent)) || document.title;
  const firstParagraph = [...main.querySelectorAll('p')].map(p => collapse(p.textContent)).find(t => t.length > 40) || '';
  const description = meta(['description', 'og:description', 'twitter:description']);
  const siteName = meta(['og:site_name', 'application-name']) || location.hostname;
  return {
    status: 'ok',
    url: location.href,
    title: document.title,
    text,
    article: {
      title,
      byline: byline(main),
      siteName,
      excerpt: clip(description || firstParagraph, 300),
      lang: document.documentElement.lang || '',
    },
    metadata: {
      title: document.title,
      description,
      author: byline(main),
      keywords: meta(['keywords', 'news_keywords']),
      published: published(),
      siteName,
    },
    content_element: describe(main),
    ready_state: document.readyState,
    // The section headings of the main content, for the search index's outline of the
    // page (what the page is about, in a few lines).
    headings: [...main.querySelectorAll('h1, h2, h3')].map(h => collapse(h.textContent))
      .filter(t => t.length > 1).slice(0, 40),
    // The frames inside the main content, for a caller that reads them too (the
    // search index): each as a locator of its element in this document.
    frames: [...main.querySelectorAll('iframe, frame')].filter(isVisible).slice(0, 8).map(cssLocator),
  };
};

// HTML of the document (or an element) without what only a browser needs: scripts,
// styles, stylesheet links, inline style attributes, comments and event handlers.
TW.clean_html = function (args) {
  const a = args || {};
  let source = document.documentElement;
  if (a.selector) {
    const r = resolveLocator(a.selector);
    if (!r.el) return r;
    source = r.el;
  }
  const copy = source.cloneNode(true);
  for (const el of copy.querySelectorAll('script, style, link, noscript, template')) el.remove();
  const walker = document.createTreeWalker(copy, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_COMMENT);
  const comments = [];
  for (let n = walker.currentNode; n; n = walker.nextNode()) {
    if (n.nodeType === 8) { comments.push(n); continue; }
    n.removeAttribute('style');
    for (const name of [...n.getAttributeNames()]) if (/^on/i.test(name)) n.removeAttribute(name);
  }
  for (const c of comments) c.remove();
  return { status: 'ok', url: location.href, title: document.title, html: copy.outerHTML };
};

// The size of the document's DOM, as the DOM-size insight counts it: how many
// elements, how deep the deepest one sits, and the most children one element has.
// Walks the light DOM only (shadow trees are their components' own).
TW.dom_size = function () {
  let elements = 0;
  let depth = 0;
  let mostChildren = 0;
  const walk = function (element, level) {
    elements += 1;
    if (level > depth) depth = level;
    const children = element.children;
    if (children.length > mostChildren) mostChildren = children.length;
    for (let i = 0; i < children.length; i++) walk(children[i], level + 1);
  };
  if (document.documentElement) walk(document.documentElement, 1);
  return { status: 'ok', elements: elements, depth: depth, most_children: mostChildren };
};
