// net.js: TW.fetch, an HTTP request sent from the page itself, so it carries the page's
// origin and cookies as the page's own requests do. The answer's body comes back as
// parsed JSON, as text (up to a cap, which is said), or, for binary data, as its size.

const TEXT_TYPES = /^text\/|json|xml|javascript|ecmascript|x-www-form-urlencoded|graphql/i;

function base64Bytes(text) {
  const raw = atob(text);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

TW.fetch = async function (args) {
  const a = args || {};
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), a.timeout_ms > 0 ? a.timeout_ms : 30000);
  const maxBytes = a.max_bytes > 0 ? a.max_bytes : 1 << 20;
  try {
    const method = String(a.method || 'GET').toUpperCase();
    const init = { method, headers: a.headers || {}, credentials: 'include', signal: controller.signal };
    if (a.form) {
      const form = new FormData();
      for (const [k, v] of Object.entries(a.form.fields || {})) form.append(k, String(v));
      for (const f of a.form.files || []) {
        form.append(f.name, new Blob([base64Bytes(f.base64 || '')], { type: f.type || 'application/octet-stream' }), f.filename || 'file');
      }
      init.body = form;
    } else if (a.body != null && method !== 'GET' && method !== 'HEAD') {
      init.body = a.body;
    }
    const response = await fetch(a.url, init);
    const headers = {};
    response.headers.forEach((v, k) => { headers[k] = v; });
    const type = response.headers.get('content-type') || '';
    const buffer = await response.arrayBuffer();
    const out = {
      status: response.status, statusText: response.statusText, headers, url: response.url,
      redirected: response.redirected, bytes: buffer.byteLength,
    };
    if (type && !TEXT_TYPES.test(type)) {
      out.body = '[Binary data not displayed: ' + buffer.byteLength + ' bytes of ' + type + ']';
      return { status: 'ok', response: out };
    }
    const text = new TextDecoder().decode(buffer.byteLength > maxBytes ? buffer.slice(0, maxBytes) : buffer);
    if (/json/i.test(type) && buffer.byteLength <= maxBytes) {
      try { out.body = JSON.parse(text); return { status: 'ok', response: out }; } catch (e) { /* served as text */ }
    }
    out.body = text;
    if (buffer.byteLength > maxBytes) out.truncated = { shown_bytes: maxBytes, total_bytes: buffer.byteLength };
    return { status: 'ok', response: out };
  } catch (e) {
    const aborted = e && e.name === 'AbortError';
    return {
      status: aborted ? 'timeout' : 'request_failed',
      message: aborted ? 'no answer within the timeout' : String(e && e.message || e),
    };
  } finally {
    clearTimeout(timer);
  }
};
