// The link to tabwire: a native-messaging port to `tabwire`'s host, which relays to the
// local tabwire server. The first message is a hello naming this browser profile; every
// message after it is CDP JSON (see cdp.js). The link reconnects by itself.

import { BUILD_STAMP } from './stamp.js';

const HOST = 'dev.tabwire.link';
const RETRY_MS = [250, 500, 1000, 2000, 5000];
// How often the keep-alive alarm wakes a stopped worker (see start).
const KEEPALIVE_SECONDS = 2;

let port = null;
let attempt = 0;
let onMessage = () => {};
let onDown = () => {};

// A stable id for this browser profile, so tab handles survive worker restarts.
async function clientId() {
  const { tabwireClientId } = await chrome.storage.local.get('tabwireClientId');
  if (tabwireClientId) return tabwireClientId;
  const id = 'ext-' + crypto.randomUUID().slice(0, 8);
  await chrome.storage.local.set({ tabwireClientId: id });
  return id;
}

// The host sends a message over the browser's 1 MiB limit as consecutive chunks of its
// JSON text; they arrive in order, so joining needs no ids.
let pending = '';
function join(message) {
  if (typeof message.tabwire_chunk !== 'string') return message;
  pending += message.tabwire_chunk;
  if (!message.last) return null;
  const text = pending;
  pending = '';
  try {
    return JSON.parse(text);
  } catch (e) {
    // Cannot happen with tabwire's host; if it does, the command's caller times out.
    console.warn('tabwire: dropped a message that did not join into JSON', e);
    return null;
  }
}

export function send(message) {
  if (port) port.postMessage(message);
}

export function start(handlers) {
  onMessage = handlers.onMessage;
  onDown = handlers.onDown;
  connect();
  // Chrome stops an extension's worker now and then (a crash, an update, its own
  // schedule), and an idle browser sends no event that would start it again. The alarm
  // does: starting the worker runs this file, which relinks. Chrome lets an unpacked
  // extension's alarm fire every second or more (a packed one every 30 s at most).
  chrome.alarms.create('tabwire-link', { periodInMinutes: KEEPALIVE_SECONDS / 60 });
  chrome.alarms.onAlarm.addListener((alarm) => { if (alarm.name === 'tabwire-link' && !port) connect(); });
}

// Set while a connect awaits the client id, so a second connect (the alarm, a retry)
// cannot open a second port meanwhile.
let connecting = false;

async function connect() {
  if (port || connecting) return;
  connecting = true;
  let id;
  try {
    id = await clientId();
  } finally {
    connecting = false;
  }
  if (port) return;
  port = chrome.runtime.connectNative(HOST);
  port.onMessage.addListener((message) => {
    attempt = 0;
    const whole = join(message);
    if (whole) onMessage(whole);
  });
  port.onDisconnect.addListener(() => {
    port = null;
    pending = '';
    onDown();
    const wait = RETRY_MS[Math.min(attempt++, RETRY_MS.length - 1)];
    setTimeout(connect, wait);
  });
  port.postMessage({
    tabwire_link: 1,
    client_id: id,
    browser: navigator.userAgent,
    extension_version: chrome.runtime.getManifest().version,
    build_stamp: BUILD_STAMP,
  });
}

