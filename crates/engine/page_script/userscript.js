// userscript.js: the guard put before each userscript (browser/userscripts.rs), in the
// same function: whether the page's URL is one the script runs on.

// Whether `url` matches one URL pattern: `<all_urls>` is every web page; otherwise `*`
// stands for any run of characters and the rest must match exactly.
function urlMatches(pattern, url) {
  if (pattern === '<all_urls>') return /^(https?|file):/.test(url);
  const parts = pattern.split('*').map(function (part) {
    return part.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  });
  return new RegExp('^' + parts.join('.*') + '$').test(url);
}

// Whether a script with these patterns runs on `url`.
function runsOn(matches, excludes, url) {
  return matches.some(function (p) { return urlMatches(p, url); }) &&
    !excludes.some(function (p) { return urlMatches(p, url); });
}

// Runs `run` once the document reaches `event` (DOMContentLoaded or load), or now if it
// already has.
function whenReady(event, run) {
  const reached = event === 'load' ? document.readyState === 'complete' : document.readyState !== 'loading';
  if (reached) run();
  else addEventListener(event, run, { once: true });
}

// Puts a stylesheet into the page (a CSS userscript), as soon as the document has a root:
// a script run at document start may come before the <html> element exists.
function addStyle(css) {
  const style = document.createElement('style');
  style.textContent = css;
  const root = document.head || document.documentElement;
  if (root) {
    root.appendChild(style);
    return;
  }
  new MutationObserver(function (records, observer) {
    if (!document.documentElement) return;
    observer.disconnect();
    document.documentElement.appendChild(style);
  }).observe(document, { childList: true });
}
