// CDP over chrome.debugger, with the browser-level Target domain emulated by chrome.tabs,
// so the tabwire engine drives this browser as it drives one it launched. No page logic
// lives here: this only carries messages.

import * as api from './api.js';

// Our session id for a tab's top-level debugger session.
const tabSession = (tabId) => 'tab-' + tabId;
const targetOfTab = (tabId) => 'tab-' + tabId;
const tabOfTarget = (targetId) => {
  const id = Number(String(targetId).replace(/^tab-/, ''));
  if (!Number.isInteger(id)) throw protocolError('No target with given id found');
  return id;
};

const attached = new Set();      // tab ids we hold a debugger on
let lastDetach = -Infinity;      // when the last debugger we held was let go (performance.now)

// Chrome shows a bar above every page ("… started debugging this browser") from an
// extension's first debugger attach until 5 s after its last detach. The bar slides in a
// moment after the attach and shrinks the page's viewport over a few frames; an input
// aimed while it slides can miss (its release falls below the shrunken page). So an attach
// that brings the bar waits until the tab's content area has taken its new height.
const BAR_KEPT_MS = 5000;        // Chrome keeps the bar this long after the last detach
const BAR_START_MS = 600;        // the longest the bar takes to start sliding in
const BAR_STEADY_MS = 100;       // the height unchanged this long: the slide is over
const BAR_POLL_MS = 20;
const childTabs = new Map();     // child (OOPIF) session id -> tab id
let discovering = false;
let emit = () => {};

function protocolError(message, code = -32000) {
  const error = new Error(message);
  error.code = code;
  return error;
}

function targetInfo(tab) {
  const info = {
    targetId: targetOfTab(tab.id), type: 'page', title: tab.title || '', url: tab.url || tab.pendingUrl || '',
    attached: attached.has(tab.id), canAccessOpener: false, browserContextId: 'default',
  };
  // The tab that opened it (window.open, a target=_blank link), as CDP names an opener:
  // tabwire tells an agent which tab its click opened.
  if (tab.openerTabId !== undefined) info.openerId = targetOfTab(tab.openerTabId);
  return info;
}

// The height of a tab's content area if it is on screen (its window's selected tab, the
// window not minimised); null otherwise: a hidden tab is resized only when shown.
async function shownHeight(tabId) {
  const tab = await chrome.tabs.get(tabId);
  if (!tab.active) return null;
  const win = await chrome.windows.get(tab.windowId);
  return win.state === 'minimized' ? null : tab.height;
}

// Waits for the debugging bar to finish sliding in above the tab: its content height
// changes from `before`, then holds for BAR_STEADY_MS. Gives up after BAR_START_MS if it
// never changes (a browser started with --silent-debugger-extension-api shows no bar).
async function barSettled(tabId, before) {
  const started = performance.now();
  let height = before;
  let changedAt = null;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, BAR_POLL_MS));
    let now;
    try { now = (await chrome.tabs.get(tabId)).height; } catch (e) { return; /* closed */ }
    const t = performance.now();
    if (now !== height) { height = now; changedAt = t; }
    if (changedAt === null ? t - started > BAR_START_MS : t - changedAt >= BAR_STEADY_MS) return;
  }
}

// Browser-level commands: the Target domain (tabs) and a little of Browser.
const browserCommands = {
  'Target.setDiscoverTargets': async ({ discover }) => { discovering = !!discover; return {}; },
  'Target.getTargets': async () => ({ targetInfos: (await chrome.tabs.query({})).map(targetInfo) }),
  'Target.getTargetInfo': async ({ targetId }) => ({ targetInfo: targetInfo(await chrome.tabs.get(tabOfTarget(targetId))) }),
  'Target.createTarget': async ({ url, background, newWindow, width, height }) => {
    if (newWindow) {
      const size = width && height ? { width, height } : {};
      const win = await chrome.windows.create({ url: url || 'about:blank', focused: !background, ...size });
      return { targetId: targetOfTab(win.tabs[0].id) };
    }
    const tab = await chrome.tabs.create({ url: url || 'about:blank', active: !background });
    return { targetId: targetOfTab(tab.id) };
  },
  'Target.closeTarget': async ({ targetId }) => { await chrome.tabs.remove(tabOfTarget(targetId)); return { success: true }; },
  'Target.activateTarget': async ({ targetId }) => {
    const tab = await chrome.tabs.update(tabOfTarget(targetId), { active: true });
    await chrome.windows.update(tab.windowId, { focused: true });
    return {};
  },
  'Target.attachToTarget': async ({ targetId }) => {
    const tabId = tabOfTarget(targetId);
    if (!attached.has(tabId)) {
      const barComing = attached.size === 0 && performance.now() - lastDetach > BAR_KEPT_MS;
      const before = barComing ? await shownHeight(tabId) : null;
      try {
        await chrome.debugger.attach({ tabId }, '1.3');
      } catch (e) {
        // A worker restart forgets what it held; the debugger may still be ours.
        if (!String(e.message).includes('Another debugger')) throw protocolError(String(e.message));
      }
      attached.add(tabId);
      if (before !== null) await barSettled(tabId, before);
    }
    return { sessionId: tabSession(tabId) };
  },
  // The window a tab is in; `active` (tabwire's addition) says whether it is the
  // window's selected tab, which CDP has no word for.
  'Browser.getWindowForTarget': async ({ targetId }) => {
    const tab = await chrome.tabs.get(tabOfTarget(targetId));
    // Its bounds as CDP gives them, windowState included (normal, minimized, …).
    const win = await chrome.windows.get(tab.windowId);
    const bounds = { left: win.left, top: win.top, width: win.width, height: win.height, windowState: win.state };
    return { windowId: tab.windowId, bounds, active: tab.active };
  },
  'Browser.setWindowBounds': async ({ windowId, bounds }) => {
    const { width, height, left, top } = bounds || {};
    await chrome.windows.update(windowId, { width, height, left, top, state: 'normal' });
    return {};
  },
  'Tabwire.call': async ({ name, args }) => ({ result: await api.call(name, args) }),
  'Browser.getVersion': async () => ({
    protocolVersion: '1.3', product: productName(), userAgent: navigator.userAgent, jsVersion: '',
  }),
};

function productName() {
  const brand = (navigator.userAgentData && navigator.userAgentData.brands || [])
    .find((b) => !/Not.A.Brand/i.test(b.brand));
  return brand ? brand.brand + '/' + brand.version : 'Chrome';
}

// Which debuggee a session id names: a tab, or a child session inside one.
function debuggee(sessionId) {
  const top = /^tab-(\d+)$/.exec(sessionId);
  if (top) return { tabId: Number(top[1]) };
  const tabId = childTabs.get(sessionId);
  if (tabId !== undefined) return { tabId, sessionId };
  throw protocolError('Session with given id not found.');
}

// Fences. chrome.debugger hands us events and command replies on separate channels, so
// an event the page sent before a reply can reach us after it; CDP clients (tabwire too)
// rely on the order. A fence turns lifecycle events on: the page answers at once by
// replaying its frames' lifecycle events (root frame first, one event of each name per
// frame), all sent after everything before. The fence resolves on the replay's first
// event, recognised by its frame and name (learned from the first replay), so what is
// left of an earlier fence's replay cannot resolve a later one. Lifecycle events tabwire
// did not ask for are not passed on. (Where tabwire did ask for them, a genuine event of
// that frame and name in flight can resolve a fence early.)
const FENCE_TIMEOUT_MS = 1000;
const lifecycleWanted = new Set(); // sessions where tabwire itself enabled lifecycle events
const fenceArrived = new Map();    // session -> resolves the fence waiting there
const fenceQueue = new Map();      // session -> the last fence; one at a time per session
const replayStart = new Map();     // session -> 'frameId name' of a replay's first event

function fence(sessionId) {
  const previous = fenceQueue.get(sessionId) || Promise.resolve();
  const next = previous.then(() => raiseFence(sessionId));
  fenceQueue.set(sessionId, next.catch(() => {}));
  return next;
}

async function raiseFence(sessionId) {
  const target = debuggee(sessionId);
  let timer;
  const arrived = new Promise((resolve) => {
    timer = setTimeout(() => resolve(false), FENCE_TIMEOUT_MS);
    fenceArrived.set(sessionId, () => resolve(true));
  });
  try {
    await chrome.debugger.sendCommand(target, 'Page.setLifecycleEventsEnabled', { enabled: true });
    const settled = await arrived;
    // No replay start came (no document, or a different one now): learn it anew.
    if (!settled) replayStart.delete(sessionId);
    return { settled };
  } finally {
    clearTimeout(timer);
    fenceArrived.delete(sessionId);
    if (!lifecycleWanted.has(sessionId)) {
      chrome.debugger.sendCommand(target, 'Page.setLifecycleEventsEnabled', { enabled: false }).catch(() => {});
    }
  }
}

export async function handle(message) {
  const { id, method, params = {}, sessionId } = message;
  try {
    let result;
    if (!sessionId) {
      const command = browserCommands[method];
      if (!command) throw protocolError(`'${method}' wasn't found`, -32601);
      result = await command(params);
    } else if (method === 'Tabwire.fence') {
      result = await fence(sessionId);
    } else {
      if (method === 'Page.setLifecycleEventsEnabled') {
        if (params.enabled) lifecycleWanted.add(sessionId); else lifecycleWanted.delete(sessionId);
      }
      result = await chrome.debugger.sendCommand(debuggee(sessionId), method, params);
    }
    emit({ id, result: result || {} });
  } catch (e) {
    emit({ id, error: { code: e.code || -32000, message: String(e.message || e) } });
  }
}

export function start(send) {
  emit = send;
  chrome.debugger.onEvent.addListener((source, method, params) => {
    const sessionId = source.sessionId || tabSession(source.tabId);
    if (method === 'Target.attachedToTarget' && params.sessionId) childTabs.set(params.sessionId, source.tabId);
    if (method === 'Target.detachedFromTarget' && params.sessionId) childTabs.delete(params.sessionId);
    if (method === 'Page.lifecycleEvent') {
      const arrived = fenceArrived.get(sessionId);
      const mark = params.frameId + ' ' + params.name;
      if (arrived && !replayStart.has(sessionId)) replayStart.set(sessionId, mark);
      if (arrived && replayStart.get(sessionId) === mark) arrived();
      if (!lifecycleWanted.has(sessionId)) return;
    }
    emit({ method, params, sessionId });
  });
  chrome.debugger.onDetach.addListener((source) => {
    letGo(source.tabId);
    emit({ method: 'Target.detachedFromTarget', params: { sessionId: tabSession(source.tabId), targetId: targetOfTab(source.tabId) } });
  });
  const changed = (tab) => discovering && emit({ method: 'Target.targetInfoChanged', params: { targetInfo: targetInfo(tab) } });
  chrome.tabs.onCreated.addListener((tab) => discovering && emit({ method: 'Target.targetCreated', params: { targetInfo: targetInfo(tab) } }));
  chrome.tabs.onUpdated.addListener((_, __, tab) => changed(tab));
  chrome.tabs.onRemoved.addListener((tabId) => {
    letGo(tabId);
    if (discovering) emit({ method: 'Target.targetDestroyed', params: { targetId: targetOfTab(tabId) } });
  });
}

// Forgets a tab's debugger; the last one let go starts the bar's 5 s.
function letGo(tabId) {
  if (attached.delete(tabId) && attached.size === 0) lastDetach = performance.now();
}

// When the link drops, let go of every tab: a new engine attaches afresh.
export async function reset() {
  discovering = false;
  childTabs.clear();
  lifecycleWanted.clear();
  fenceQueue.clear();
  replayStart.clear();
  for (const tabId of [...attached]) {
    letGo(tabId);
    try { await chrome.debugger.detach({ tabId }); } catch (e) { /* already gone */ }
  }
}
