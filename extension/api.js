// The browser APIs tabwire calls by name. One table serves both ways in: the link
// (`Tabwire.call` messages, see cdp.js) and, in a browser tabwire launched, CDP evaluation
// of `self.tabwireCall(...)` in this worker.

import { BUILD_STAMP } from './stamp.js';

const API = {
  'bookmarks.getTree': () => chrome.bookmarks.getTree(),
  'bookmarks.getSubTree': ({ id }) => chrome.bookmarks.getSubTree(id),
  'bookmarks.create': ({ parentId, title, url }) => chrome.bookmarks.create({ parentId, title, url }),
  'bookmarks.remove': ({ id }) => chrome.bookmarks.remove(id),
  'bookmarks.removeTree': ({ id }) => chrome.bookmarks.removeTree(id),
  'history.search': ({ text, startTime, endTime, maxResults }) =>
    chrome.history.search({ text: text || '', startTime, endTime, maxResults }),
  'management.getAll': () => chrome.management.getAll(),
  'management.setEnabled': ({ id, enabled }) => chrome.management.setEnabled(id, enabled),
  'management.uninstall': ({ id, showConfirmDialog }) => chrome.management.uninstall(id, { showConfirmDialog }),
  'contentSettings.get': ({ type, url }) => chrome.contentSettings[type].get({ primaryUrl: url }),
  'contentSettings.set': ({ type, pattern, setting }) => chrome.contentSettings[type].set({ primaryPattern: pattern, setting }),
  'downloads.fetch': ({ url, timeoutMs }) => fetchDownload(url, timeoutMs),
  'downloads.waitNext': (args) => waitNextDownload(args),
  'bookmarks.search': ({ query }) => chrome.bookmarks.search(query || {}),
  'runtime.sendMessage': ({ id, message }) => chrome.runtime.sendMessage(id, message),
  'runtime.self': () => ({ id: chrome.runtime.id, version: chrome.runtime.getManifest().version, build_stamp: BUILD_STAMP }),
  'tabs.moveTarget': (args) => moveTarget(args),
};

// The browser's tab id of a page target: over the link targets are named after their
// tab (`tab-12`); in a browser tabwire launched, the debugger's target list says.
async function tabOfPageTarget(targetId) {
  const named = /^tab-(\d+)$/.exec(String(targetId));
  if (named) return Number(named[1]);
  const target = (await chrome.debugger.getTargets()).find((t) => t.id === targetId);
  if (!target || target.tabId === undefined) throw new Error('no tab shows target ' + targetId);
  return target.tabId;
}

// Moves a page's tab to another window, or into a new one, without reloading it; the
// window it lands in is focused unless told not to.
async function moveTarget({ targetId, windowId, newWindow, index, focused }) {
  const tabId = await tabOfPageTarget(targetId);
  if (newWindow) {
    const made = await chrome.windows.create({ tabId, focused: focused !== false });
    return { tabId, windowId: made.id, index: 0 };
  }
  const moved = await chrome.tabs.move(tabId, { windowId, index: index === undefined ? -1 : index });
  const tab = Array.isArray(moved) ? moved[0] : moved;
  if (focused !== false) await chrome.windows.update(tab.windowId, { focused: true });
  return { tabId, windowId: tab.windowId, index: tab.index };
}

// Starts a download and resolves when it ends, or with its progress at the deadline. A web
// page downloads like any other file (its type is in the item's `mime`).
function fetchDownload(url, timeoutMs) {
  return new Promise((resolve, reject) => {
    let id = null;
    const ends = new Map(); // state changes seen before the download id was known
    const itemOf = async (which) => (await chrome.downloads.search({ id: which }))[0];
    const current = () => itemOf(id);
    const stop = () => {
      chrome.downloads.onChanged.removeListener(listener);
      clearTimeout(timer);
    };
    const finish = async (state) => {
      stop();
      // The deadline passed before the download even started: nothing to look up.
      if (id === null) return resolve({ id: null, url, state: null });
      const item = await current();
      resolve(state ? { ...item, state } : item);
    };
    // Listening starts before the download does, so no state change can be missed.
    const listener = (delta) => {
      const state = delta.state && delta.state.current;
      if (state !== 'complete' && state !== 'interrupted') return;
      if (id === null) ends.set(delta.id, state);
      else if (delta.id === id) finish(state);
    };
    chrome.downloads.onChanged.addListener(listener);
    const timer = setTimeout(() => finish(null), timeoutMs || 60000);
    chrome.downloads.download({ url, conflictAction: 'uniquify', saveAs: false }).then((started) => {
      // An end seen before the id was known waits in `ends`.
      id = started;
      if (ends.has(id)) finish(ends.get(id));
    }, (error) => {
      stop();
      reject(error);
    });
  });
}

// Downloads an earlier wait already handed out (this worker's life; ids are the browser's).
const claimedDownloads = new Set();
// How far back a wait looks for a download that started before it.
const RECENT_DOWNLOAD_MS = 60000;

// Resolves with the oldest download not handed out yet whose file name or URL contains
// `filenameContains` (started in the last minute, or from now on), once it has finished
// when `waitForComplete`; null at the deadline if none started.
function waitNextDownload({ filenameContains, timeoutMs, waitForComplete }) {
  const part = (filenameContains || '').toLowerCase();
  const matches = (item) => !claimedDownloads.has(item.id) &&
    (!part || (item.filename || '').toLowerCase().includes(part) || (item.url || '').toLowerCase().includes(part));
  const report = (item) => ({
    id: item.id, url: item.url, filename: item.filename, mime: item.mime, fileSize: item.fileSize,
    bytesReceived: item.bytesReceived, exists: item.exists,
    state: item.state === 'complete' ? 'complete' : item.state === 'interrupted' ? 'interrupted' : 'in_progress',
    startMs: Date.parse(item.startTime) || null, endMs: item.endTime ? Date.parse(item.endTime) : null,
  });
  return new Promise((resolve) => {
    let chosen = null;
    const done = async (id) => {
      cleanup();
      const [item] = await chrome.downloads.search({ id });
      resolve(item ? report(item) : null);
    };
    const take = (item) => {
      chosen = item.id;
      claimedDownloads.add(item.id);
      if (!waitForComplete || item.state !== 'in_progress') done(item.id);
    };
    const onCreated = (item) => { if (chosen === null && matches(item)) take(item); };
    const onChanged = (delta) => {
      const state = delta.state && delta.state.current;
      if (delta.id === chosen && (state === 'complete' || state === 'interrupted')) done(chosen);
    };
    const timer = setTimeout(() => (chosen === null ? (cleanup(), resolve(null)) : done(chosen)), timeoutMs || 60000);
    const cleanup = () => {
      clearTimeout(timer);
      chrome.downloads.onCreated.removeListener(onCreated);
      chrome.downloads.onChanged.removeListener(onChanged);
    };
    chrome.downloads.onCreated.addListener(onCreated);
    chrome.downloads.onChanged.addListener(onChanged);
    chrome.downloads.search({ startedAfter: new Date(Date.now() - RECENT_DOWNLOAD_MS).toISOString(), orderBy: ['startTime'] })
      .then((items) => { const item = items.find(matches); if (item && chosen === null) take(item); });
  });
}

export async function call(name, args) {
  const method = API[name];
  if (!method) throw new Error('unknown browser API ' + name);
  const result = await method(args || {});
  return result === undefined ? null : result;
}

// Reachable only from this worker's own context (and a debugger tabwire holds on it).
self.tabwireCall = call;
