#!/usr/bin/env python3
"""The agents of the farm bench: N MCP clients over Streamable HTTP, standard library only.

Each agent opens its own MCP session (initialize, then notifications/initialized) at the
URL it is given (HAProxy in front of several `tabwire --http`), and makes a fixed number
of tools/call, cycling

    open_url(page?agent=M) -> scan_page -> page_type(#in, value) -> page_click(#go) -> scan_page

where M is the agent's marker (ag07-k3f9: its number and the run's nonce). The page sets
the cookies `agent=M` and `seen_M=1` and shows `document.cookie`, so every read tells
which agent's cookies this browser holds. Every reply is checked:

- lost: a request that got no JSON-RPC reply (connection refused or reset, a proxy's 5xx,
  a stream that ended without the reply);
- misrouted: a reply whose id is not the request's, or that names another agent's marker
  anywhere but in the cookie line;
- cross-agent cookies: a read whose cookie line holds another agent's marker;
- check failed: a reply that is ok but does not show what the call did (the page is not
  this agent's, the typed value is not in the result after the click).

Retry policy, each step counted: HTTP 404 (session unknown) -> initialize again and start
the cycle over with open_url; `browser_busy` -> the same call again after a growing
backoff, until --busy-deadline (then the agent gives up); a reply that carries
`browser_lost` (the call ran in a new browser) or fails with a browser-loss code -> the
cycle over with open_url (open_url itself: once more after a backoff); no reply -> the
same call again after a backoff, at most --transport-retries times. Before an agent's first
success, `timeout`, `browser_unreachable` and `transport_error` are taken as still waiting
for a farm browser and retried like `browser_busy`: a call queued at the farm past its
time limit answers `transport_error` ("no WebSocket handshake within …"), and so does a
tabwire without `browser_busy` when the farm refuses it with HTTP 429.

With --fault-cmd the command runs (in a shell) once --fault-at of all calls are done, and
each agent's account of what it saw after that moment goes into the report.

Prints a table and writes it as markdown to --md. Exit status 0 when the run met its
bar: no misrouted reply, every agent finished every call with its last cycle verified,
and, without faults, nothing lost and no failed call; with --expect-isolation, no
cross-agent cookie either.
"""

import argparse
import http.client
import json
import os
import random
import re
import socket
import string
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections import Counter

CYCLE = ("open", "read", "type", "click", "read_result")
# Codes that mean the browser behind the session went away. The page the cycle opened went
# with it, so the cycle starts over with open_url (itself tried once more after a backoff).
LOSS_CODES = {
    "browser_lost",
    "browser_disconnected",
    "browser_unreachable",
    "tab_not_found",
    "session_disconnected",
    "session_not_connected",
    "cdp_error",
}
# Before the first success these mean "still waiting for a farm browser".
QUEUED_CODES = {"browser_busy", "timeout", "browser_unreachable", "transport_error"}
QUEUE_WAIT_S = 2.0
COOKIE_LINE = re.compile(r"cookies: \[([^\]]*)\]")


def now():
    return time.monotonic()


class NoReply(Exception):
    """A request that got no JSON-RPC reply; kind says how (an exception name or http_502)."""

    def __init__(self, kind, detail=""):
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


class Wire:
    """One keep-alive HTTP connection to the MCP endpoint, and the session on it."""

    def __init__(self, url, timeout):
        parts = urllib.parse.urlsplit(url)
        self.host = parts.hostname
        self.port = parts.port or 80
        self.path = parts.path or "/mcp"
        self.timeout = timeout
        self.conn = None
        self.session = None

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def send(self, method, message=None, want_id=None):
        """One request. Returns (status, headers, messages, replied_to_us or None)."""
        if self.conn is None:
            self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        headers = {"Accept": "application/json, text/event-stream"}
        body = None
        if message is not None:
            body = json.dumps(message).encode()
            headers["Content-Type"] = "application/json"
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        try:
            self.conn.request(method, self.path, body=body, headers=headers)
            response = self.conn.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException) as error:
            self.close()
            raise NoReply(type(error).__name__, str(error)) from None
        if response.getheader("Connection", "").lower() == "close":
            self.close()
        status = response.status
        got = {k.lower(): v for k, v in response.getheaders()}
        ctype = got.get("content-type", "")
        messages = []
        try:
            if status == 200 and ctype.startswith("text/event-stream"):
                messages = parse_sse(raw.decode("utf-8", "replace"))
            elif status == 200 and ctype.startswith("application/json"):
                parsed = json.loads(raw)
                messages = parsed if isinstance(parsed, list) else [parsed]
        except ValueError as error:
            raise NoReply("unparseable_reply", f"{error}: {raw[:200]!r}") from None
        got["_body"] = raw[:300].decode("utf-8", "replace")
        reply = None
        for m in messages:
            if isinstance(m, dict) and ("result" in m or "error" in m):
                reply = m if reply is None or m.get("id") == want_id else reply
        return status, got, messages, reply


def parse_sse(text):
    """The JSON messages of an event stream (events whose data is empty are skipped)."""
    out, data = [], []
    for line in text.splitlines() + [""]:
        if line == "":
            if data:
                payload = "\n".join(data).strip()
                if payload:
                    out.append(json.loads(payload))
            data = []
        elif line.startswith("data:"):
            data.append(line[5:].lstrip(" ") if line[5:6] == " " else line[5:])
    return out


class Run:
    """What all agents share: the settings, the fault trigger, the clock."""

    def __init__(self, args, markers):
        self.args = args
        self.markers = markers
        self.total = args.agents * args.calls
        self.done = 0
        self.lock = threading.Lock()
        self.started = now()
        self.fault_at = None  # monotonic time the fault command started
        self.fault_output = ""
        self.fault_thread = None
        self.trace = open(args.trace, "w") if args.trace else None

    def log(self, agent, **fields):
        """One line of the call log (--trace): what an agent did and saw, as it happened."""
        if self.trace is None:
            return
        line = json.dumps({"t": round(now() - self.started, 3), "agent": agent, **fields})
        with self.lock:
            self.trace.write(line + "\n")

    def slot_done(self):
        with self.lock:
            self.done += 1
            fire = (
                self.args.fault_cmd
                and self.fault_thread is None
                and self.done >= self.args.fault_at * self.total
            )
            if fire:
                self.fault_thread = threading.Thread(target=self._fault, daemon=True)
        if fire:
            self.fault_thread.start()

    def _fault(self):
        self.fault_at = now()
        done = self.done
        print(f"[fault] {done}/{self.total} calls done; running: {self.args.fault_cmd}", flush=True)
        proc = subprocess.run(
            self.args.fault_cmd, shell=True, capture_output=True, text=True, timeout=120
        )
        self.fault_output = f"at {done}/{self.total} calls done: " + (
            proc.stdout + proc.stderr
        ).strip()
        print(f"[fault] {self.fault_output}", flush=True)

    def after_fault(self, t):
        return self.fault_at is not None and t >= self.fault_at


class Agent(threading.Thread):
    def __init__(self, index, run):
        super().__init__(name=f"agent-{index}", daemon=True)
        self.index = index
        self.run_ = run
        self.args = run.args
        self.marker = run.markers[index]
        self.others = [m for m in run.markers if m != self.marker]
        self.wire = Wire(self.args.url, self.args.http_timeout)
        self.next_id = 0
        # The account.
        self.slots = 0  # calls done (a reply, or given up)
        self.ok = 0
        self.failed = Counter()  # final error code of calls that failed
        self.codes_seen = Counter()  # every error code in any reply, retried or not
        self.lost = Counter()  # no reply, by kind
        self.misrouted = []
        self.foreign = set()  # other agents' markers seen in this agent's cookies
        self.foreign_reads = 0
        self.check_failed = []
        self.busy = 0
        self.waiting = Counter()  # retries while waiting for a farm browser, by code
        self.queue_waits = 0
        self.first_success_s = None
        self.reinit_404 = 0
        self.sessions = 0
        self.loss_retries = 0
        self.transport_retries = 0
        self.browser_lost_facts = 0
        self.browser_restarts = 0  # replies carrying browser_lost after which the cycle restarted
        self.latencies = []  # (tool, ms) of every tools/call that got a reply
        self.servers = []  # X-Farm-Server values in order, runs collapsed
        self.tabs = {}  # (server, tab handle from the reply's target) -> [first, last] time
        self.after_fault = []  # (seconds after fault, what)
        self.verified_at = None  # when a read last showed this agent's typed value
        self.finished_at = None  # when it made its last call (None: it gave up or failed)
        self.unverified_at = None  # when one last did not
        self.recovered_s = None  # seconds from the fault to the first ok call after a disturbance
        self.gave_up = None
        self.delete_status = None

    # --- bookkeeping ------------------------------------------------------------------

    def note_server(self, headers):
        name = headers.get("x-farm-server")
        if name and (not self.servers or self.servers[-1] != name):
            self.servers.append(name)

    def event(self, what):
        self.run_.log(self.marker, event=what)
        t = now()
        if self.run_.after_fault(t) and len(self.after_fault) < 40:
            self.after_fault.append((t - self.run_.fault_at, what))

    def rid(self):
        self.next_id += 1
        return self.next_id

    # --- the session ------------------------------------------------------------------

    def initialize(self):
        """A new MCP session; retried on no reply. Returns False if it never came."""
        for attempt in range(self.args.transport_retries + 1):
            self.wire.session = None
            rid = self.rid()
            message = {
                "jsonrpc": "2.0",
                "id": rid,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": f"farm-bench-{self.marker}", "version": "1"},
                },
            }
            try:
                status, headers, _, reply = self.wire.send("POST", message, rid)
            except NoReply as e:
                self.lost[f"initialize:{e.kind}"] += 1
                self.event(f"initialize: no reply ({e.kind})")
                time.sleep(self.backoff(attempt))
                continue
            self.note_server(headers)
            session = headers.get("mcp-session-id")
            if status != 200 or reply is None or "result" not in reply or not session:
                self.lost[f"initialize:http_{status}"] += 1
                self.event(f"initialize: HTTP {status} {headers.get('_body', '')[:80]!r}")
                time.sleep(self.backoff(attempt))
                continue
            if reply.get("id") != rid:
                self.misrouted.append(f"initialize reply id {reply.get('id')} for {rid}")
            self.wire.session = session
            self.sessions += 1
            try:
                status, headers, _, _ = self.wire.send(
                    "POST", {"jsonrpc": "2.0", "method": "notifications/initialized"}
                )
            except NoReply as e:
                self.lost[f"initialized:{e.kind}"] += 1
                continue
            if status != 202:
                self.event(f"notifications/initialized: HTTP {status}")
                continue
            if self.sessions > 1:
                self.event(f"re-initialised on {self.servers[-1] if self.servers else '?'}")
            return True
        return False

    def end_session(self):
        if not self.wire.session:
            return
        try:
            status, _, _, _ = self.wire.send("DELETE")
            self.delete_status = status
        except NoReply as e:
            self.delete_status = e.kind
        self.wire.close()

    def backoff(self, attempt):
        base = min(self.args.backoff * (2**attempt), 8.0)
        return base * (0.5 + random.random() / 2)

    # --- one call -----------------------------------------------------------------------

    def call(self, tool, arguments):
        """One tools/call with the retry policy. Returns (outcome, envelope or None): ok,
        ok_new_browser (ok, but in a new browser), error, reopen (the cycle must start over),
        reset (a new MCP session), lost (no reply after the retries), gave_up."""
        busy_since = None
        busy_attempt = 0
        transport_attempt = 0
        loss_retried = False

        def transport_failed(kind, detail):
            """Counts a request that got no usable reply; True: try it again."""
            nonlocal transport_attempt
            self.lost[kind] += 1
            self.event(f"{tool}: {detail}")
            if transport_attempt >= self.args.transport_retries:
                return False
            transport_attempt += 1
            self.transport_retries += 1
            time.sleep(self.backoff(transport_attempt))
            return True

        while True:
            rid = self.rid()
            message = {
                "jsonrpc": "2.0",
                "id": rid,
                "method": "tools/call",
                "params": {"name": tool, "arguments": arguments},
            }
            t0 = now()
            try:
                status, headers, _, reply = self.wire.send("POST", message, rid)
            except NoReply as e:
                if transport_failed(e.kind, f"no reply ({e.kind})"):
                    continue
                return "lost", None
            took = now() - t0
            self.note_server(headers)
            self.run_.log(self.marker, tool=tool, http=status, ms=round(took * 1000),
                          server=headers.get("x-farm-server"), tab=tab_of(reply))
            if status == 404:
                self.reinit_404 += 1
                self.event(f"{tool}: HTTP 404 {headers.get('_body', '')[:60]!r}")
                self.wire.close()
                if not self.initialize():
                    self.gave_up = "no new MCP session after HTTP 404"
                    return "gave_up", None
                return "reset", None
            if status != 200 or reply is None:
                kind = f"http_{status}" if status != 200 else "stream_without_reply"
                if transport_failed(kind, f"{kind} {headers.get('_body', '')[:80]!r}"):
                    continue
                return "lost", None
            self.latencies.append((tool, took * 1000))
            if self.first_success_s is None and took > QUEUE_WAIT_S:
                self.queue_waits += 1
            if reply.get("id") != rid:
                self.misrouted.append(f"{tool}: reply id {reply.get('id')!r} for request {rid}")
                self.event(f"{tool}: misrouted reply id")
                return "error", None
            if "error" in reply:
                code = f"jsonrpc_{reply['error'].get('code')}"
                self.codes_seen[code] += 1
                self.event(f"{tool}: JSON-RPC error {reply['error']}")
                self.failed[code] += 1
                return "error", None
            result = reply["result"]
            text = "".join(
                c.get("text", "") for c in result.get("content", []) if c.get("type") == "text"
            )
            self.check_foreign(tool, text)
            envelope = result.get("structuredContent")
            if envelope is None:
                try:
                    envelope = json.loads(text)
                except ValueError:
                    envelope = {}
            target = envelope.get("target") if isinstance(envelope.get("target"), dict) else {}
            if target.get("session_id"):
                key = (headers.get("x-farm-server"), target["session_id"])
                span = self.tabs.setdefault(key, [t0, t0])
                span[1] = now()
            loss = find_key(envelope, "browser_lost")
            if loss is not None:
                self.browser_lost_facts += 1
                self.event(f"{tool}: reply carries browser_lost {json.dumps(loss)[:200]}")
            if not result.get("isError") and envelope.get("ok", True):
                if self.first_success_s is None:
                    self.first_success_s = now() - self.run_.started
                if self.after_fault and self.recovered_s is None:
                    self.recovered_s = now() - self.run_.fault_at
                # The call ran in a new browser: the page this cycle opened is gone.
                return ("ok_new_browser" if loss is not None and tool != "open_url" else "ok"), envelope
            code = envelope.get("error_code") or "unknown"
            self.codes_seen[code] += 1
            self.event(f"{tool}: error_code {code}: {error_message(envelope)[:120]}")
            waiting = code == "browser_busy" or (
                self.first_success_s is None and code in QUEUED_CODES
            )
            if waiting:
                self.busy += code == "browser_busy"
                self.waiting[code] += 1
                busy_since = busy_since or t0
                if now() - busy_since > self.args.busy_deadline:
                    self.failed[code] += 1
                    self.gave_up = f"waited {self.args.busy_deadline:g} s for a farm browser ({code})"
                    return "gave_up", envelope
                time.sleep(self.backoff(busy_attempt))
                busy_attempt += 1
                continue
            if tool != "open_url" and (loss is not None or code in LOSS_CODES):
                # The page this cycle opened went with its browser (a reply carrying
                # browser_lost failed in the new one): the cycle starts over.
                self.failed[code] += 1
                self.loss_retries += 1
                self.browser_restarts += loss is not None
                return "reopen", envelope
            if (loss is not None or code in LOSS_CODES) and not loss_retried:
                loss_retried = True
                self.loss_retries += 1
                time.sleep(self.backoff(1))
                continue
            self.failed[code] += 1
            return "error", envelope

    def check_foreign(self, tool, text):
        jar = COOKIE_LINE.findall(text)
        rest = COOKIE_LINE.sub("cookies: []", text)
        for other in self.others:
            if other in rest:
                self.misrouted.append(f"{tool}: reply names {other}")
                self.event(f"{tool}: reply names another agent ({other})")
                break
        seen = set()
        for line in jar:
            for cookie in line.split(";"):
                name, _, value = cookie.strip().partition("=")
                if name == "agent" and value != self.marker:
                    seen.add(value)
                elif name.startswith("seen_") and name[5:] != self.marker:
                    seen.add(name[5:])
        seen = {m for m in seen if m in self.run_.markers}
        if seen:
            self.foreign_reads += 1
            self.foreign |= seen

    def fail_check(self, what):
        if len(self.check_failed) < 5:
            self.check_failed.append(what)
        self.event(f"check failed: {what}")

    # --- the loop ---------------------------------------------------------------------

    def run(self):
        try:
            self.loop()
            self.finished_at = now()
        except Exception as error:  # a bug in this client must not look like a lost reply
            self.gave_up = f"client error: {type(error).__name__}: {error}"
            print(f"[{self.marker}] {self.gave_up}", file=sys.stderr, flush=True)
        finally:
            self.end_session()

    def loop(self):
        if self.args.stagger:
            time.sleep(random.random() * self.args.stagger)
        if not self.initialize():
            self.gave_up = "no MCP session"
            return
        step = 0
        cycle = 0
        value = None
        page_ok = False
        resets = 0
        # An agent ends on a cycle's end: after a reset that can take a few calls more than
        # --calls (counted as extra), so that its last cycle says whether it recovered.
        while self.slots < self.args.calls or step != 0:
            if self.slots >= self.args.calls + len(CYCLE) * 2:
                break
            kind = CYCLE[step]
            if kind == "open":
                cycle += 1
                value = f"{self.marker}-v{cycle}"
                url = f"{self.args.page}?agent={self.marker}&n={cycle}"
                outcome, env = self.call("open_url", {"url": url, **self.timeout_arg()})
                page_ok = outcome == "ok" and self.marker in json.dumps(env.get("target") or {})
                if outcome == "ok" and not page_ok:
                    self.fail_check(f"open_url landed elsewhere: {json.dumps(env)[:200]}")
            elif kind == "read":
                outcome, env = self.call("scan_page", {"text_only": True, **self.timeout_arg()})
                if outcome == "ok" and f"agent: {self.marker}" not in page_text(env):
                    self.fail_check(f"read after open: not this agent's page: {page_text(env)[:160]!r}")
            elif kind == "type":
                outcome, env = self.call(
                    "page_type",
                    {"selector": "#in", "text": value, "clear": True, **self.timeout_arg()},
                )
            elif kind == "click":
                outcome, env = self.call("page_click", {"selector": "#go", **self.timeout_arg()})
            else:
                outcome, env = self.call("scan_page", {"text_only": True, **self.timeout_arg()})
                if outcome == "ok":
                    text = page_text(env)
                    if f"result: {value}" in text:
                        self.verified_at = now()
                        self.run_.log(self.marker, verified=value)
                    else:
                        self.unverified_at = now()
                        self.fail_check(f"result after type+click is not {value!r}: {text[:160]!r}")
            if outcome == "gave_up":
                self.slots += 1
                return
            if outcome == "reset":
                resets += 1
                if resets > self.args.max_reinits:
                    self.gave_up = f"{resets} re-initialisations"
                    return
                step = 0
                continue
            if outcome == "ok_new_browser":
                self.browser_restarts += 1  # (a failed one is counted where it is seen)
            self.slots += 1
            self.run_.log(self.marker, slot=self.slots, step=kind, outcome=outcome,
                          code=(env or {}).get("error_code"))
            if outcome in ("ok", "ok_new_browser"):
                self.ok += 1
            if self.slots <= self.args.calls:
                self.run_.slot_done()
            if outcome in ("reopen", "ok_new_browser") or (kind == "open" and not page_ok):
                step = 0
            else:
                step = (step + 1) % len(CYCLE)

    @property
    def last_cycle_verified(self):
        """The last full cycle showed the typed value (and, with a fault, came after it,
        unless the agent had finished all its calls before the fault)."""
        if self.verified_at is None:
            return False
        if self.unverified_at is not None and self.unverified_at > self.verified_at:
            return False
        fault_at = self.run_.fault_at
        finished_first = self.finished_at is not None and fault_at is not None and self.finished_at <= fault_at
        return fault_at is None or self.verified_at > fault_at or finished_first

    def timeout_arg(self):
        return {"timeout": self.args.tool_timeout} if self.args.tool_timeout else {}


def tab_of(reply):
    """The tab handle a tools/call reply names as its target, if any."""
    try:
        return reply["result"]["structuredContent"]["target"]["session_id"]
    except (KeyError, TypeError):
        return None


def find_key(value, key):
    """The value of the first `key` anywhere in a JSON value, or None."""
    if isinstance(value, dict):
        if key in value:
            return value[key]
        value = list(value.values())
    if isinstance(value, list):
        for v in value:
            found = find_key(v, key)
            if found is not None:
                return found
    return None


def error_message(envelope):
    error = envelope.get("error")
    if isinstance(error, dict):
        return str(error.get("message", ""))
    return str(envelope.get("message", ""))


def page_text(envelope):
    if not envelope:
        return ""
    return str(envelope.get("content") or (envelope.get("data") or {}).get("content") or "")


def percentile(sorted_values, p):
    if not sorted_values:
        return 0.0
    rank = max(1, -(-len(sorted_values) * p // 100))
    return sorted_values[int(rank) - 1]


def haproxy_stats(url):
    """Per-server rows of HAProxy's CSV stats, or an empty list."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            text = response.read().decode()
    except OSError:
        return []
    lines = text.lstrip("# ").splitlines()
    if not lines:
        return []
    names = lines[0].split(",")
    rows = [dict(zip(names, line.split(","))) for line in lines[1:]]
    return [r for r in rows if r.get("svname") not in ("FRONTEND", "BACKEND") and r.get("pxname") == "tabwire"]


def report(run, agents, wall):
    args = run.args
    lat = sorted(ms for a in agents for _, ms in a.latencies)
    by_tool = {}
    for a in agents:
        for tool, ms in a.latencies:
            by_tool.setdefault(tool, []).append(ms)
    failed = sum((a.failed for a in agents), Counter())
    codes = sum((a.codes_seen for a in agents), Counter())
    lost = sum((a.lost for a in agents), Counter())
    firsts = sorted(a.first_success_s for a in agents if a.first_success_s is not None)
    misrouted = [m for a in agents for m in a.misrouted]
    shared = shared_tabs(agents)
    pairs = sum(len(a.foreign) for a in agents)
    unfinished = [a for a in agents if a.slots < args.calls or a.gave_up]
    unverified = [a for a in agents if not a.last_cycle_verified]
    checks = [f"{a.marker}: {c}" for a in agents for c in a.check_failed]

    def fmt_counter(c):
        return ", ".join(f"{k} {v}" for k, v in sorted(c.items())) or "0"

    rows = [
        ("mode", args.mode),
        ("agents", args.agents),
        ("tabwire servers (behind HAProxy)", args.servers),
        ("farm limit (concurrent)", args.farm_limit),
        ("calls per agent", args.calls),
        ("calls done", f"{sum(min(a.slots, args.calls) for a in agents)} of {run.total}"
         + (f" (+{extra} to end a cycle broken by a reset)" if (extra := sum(max(0, a.slots - args.calls) for a in agents)) else "")),
        ("calls ok", sum(a.ok for a in agents)),
        ("failed calls (final error, by code)", fmt_counter(failed)),
        ("lost (no reply / transport error)", f"{sum(lost.values())}" + (f" ({fmt_counter(lost)})" if lost else "")),
        ("misrouted replies", len(misrouted)),
        ("tabs used by two agents' sessions at once", len(shared)),
        ("cross-agent cookies seen (reads / agent pairs)", f"{sum(a.foreign_reads for a in agents)} / {pairs}"),
        ("checks failed (page, typed value)", sum(len(a.check_failed) for a in agents)),
        ("browser_busy replies (retried with backoff)", sum(a.busy for a in agents)),
        ("retries while waiting for a farm browser (by code)", fmt_counter(sum((a.waiting for a in agents), Counter()))),
        (f"queue waits (calls > {QUEUE_WAIT_S:g} s before the agent's first success)", sum(a.queue_waits for a in agents)),
        ("time to an agent's first success p50 / max (s)", f"{percentile(firsts, 50):.1f} / {firsts[-1] if firsts else 0:.1f}"),
        ("re-initialised after HTTP 404", sum(a.reinit_404 for a in agents)),
        ("replies carrying browser_lost (cycle started again)", f"{sum(a.browser_lost_facts for a in agents)} ({sum(a.browser_restarts for a in agents)})"),
        ("browser-loss replies acted on (cycle over or open_url again) / retried after no reply", f"{sum(a.loss_retries for a in agents)} / {sum(a.transport_retries for a in agents)}"),
        ("error codes seen in replies (incl. retried)", fmt_counter(codes)),
        ("latency p50 / p90 / p99 / max (ms)", " / ".join(f"{percentile(lat, p):.0f}" for p in (50, 90, 99)) + f" / {lat[-1] if lat else 0:.0f}"),
        ("latency by tool p50 / max (ms)", "; ".join(
            f"{t} {percentile(sorted(v), 50):.0f} / {max(v):.0f}" for t, v in sorted(by_tool.items()))),
        ("agents that finished all calls", f"{args.agents - len(unfinished)} of {args.agents}"),
        ("agents whose last cycle was verified" + (" (after the fault)" if args.fault_cmd else ""), f"{args.agents - len(unverified)} of {args.agents}"),
        ("wall time (s)", f"{wall:.1f}"),
    ]
    md = [f"# Farm bench: {args.agents} agents x {args.calls} calls", ""]
    if args.note:
        md += [args.note, ""]
    md += ["| measure | value |", "| --- | --- |"]
    md += [f"| {k} | {v} |" for k, v in rows]
    if misrouted:
        md += ["", "Misrouted (first 10):", ""] + [f"- {m}" for m in misrouted[:10]]
    if shared:
        md += ["", "Tabs two agents used at once (server, tab: agents and seconds into the run; first 10):", ""]
        md += [f"- {s}" for s in shared[:10]]
    if checks:
        md += ["", "Checks failed (first 10):", ""] + [f"- {c}" for c in checks[:10]]
    foreign = [a for a in agents if a.foreign]
    if foreign:
        md += ["", "Cookies of other agents seen (first 10 agents):", ""]
        md += [f"- {a.marker} saw {', '.join(sorted(a.foreign)[:6])}{' …' if len(a.foreign) > 6 else ''}" for a in foreign[:10]]
    gave = [a for a in agents if a.gave_up]
    if gave:
        md += ["", "Agents that gave up:", ""] + [f"- {a.marker}: {a.gave_up}" for a in gave]

    md += ["", "## Per agent", ""]
    head = "| agent | servers | calls | ok | failed | lost | busy | queue waits | first ok (s) | 404 re-inits | sessions | last cycle ok | DELETE |"
    md += [head, "|" + " --- |" * (head.count("|") - 1)]
    for a in agents:
        md.append(
            f"| {a.marker} | {' > '.join(a.servers) or '?'} | {a.slots} | {a.ok} | {fmt_counter(a.failed)} | "
            f"{sum(a.lost.values())} | {a.busy} | {a.queue_waits} | "
            f"{'-' if a.first_success_s is None else f'{a.first_success_s:.1f}'} | {a.reinit_404} | {a.sessions} | "
            f"{'yes' if a.last_cycle_verified else 'NO'} | {a.delete_status} |"
        )

    if args.fault_cmd:
        md += ["", "## Faults", ""]
        if run.fault_at is None:
            md += ["The fault command never ran (the run ended before its threshold)."]
        else:
            md += [f"At {run.fault_at - run.started:.1f} s into the run: {run.fault_output}", ""]
            noticed = [a for a in agents if a.after_fault]
            rest = "" if len(noticed) == len(agents) else "; the others ran on undisturbed"
            md += [f"{len(noticed)} of {len(agents)} agents saw something after the fault{rest}.", ""]
            md += ["| agent | servers | first seen after the fault (s: what) | then | ok again at (s) | 404 re-inits | finished | last cycle ok |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
            for a in agents:
                if not a.after_fault:
                    continue
                first = f"{a.after_fault[0][0]:.1f}: {a.after_fault[0][1]}"
                then = "; ".join(f"{t:.1f}: {w}" for t, w in a.after_fault[1:5])
                md.append(
                    f"| {a.marker} | {' > '.join(a.servers)} | {md_cell(first)} | {md_cell(then)} | "
                    f"{'-' if a.recovered_s is None else f'{a.recovered_s:.1f}'} | {a.reinit_404} | "
                    f"{a.slots}/{args.calls} | {'yes' if a.last_cycle_verified else 'NO'} |"
                )
    stats = haproxy_stats(args.stats_url) if args.stats_url else []
    if stats:
        md += ["", "## HAProxy's view", ""]
        md += ["| server | status | sessions | 2xx | 4xx | 5xx | retries | redispatches | check downs |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in stats:
            md.append(
                f"| {r.get('svname')} | {r.get('status')} | {r.get('stot')} | {r.get('hrsp_2xx')} | {r.get('hrsp_4xx')} | "
                f"{r.get('hrsp_5xx')} | {r.get('wretr')} | {r.get('wredis')} | {r.get('chkdown')} |"
            )

    problems = []
    if misrouted:
        problems.append(f"{len(misrouted)} misrouted")
    if shared:
        problems.append(f"{len(shared)} tabs shared by two sessions")
    if unfinished:
        problems.append(f"{len(unfinished)} agents did not finish")
    if unverified:
        problems.append(f"{len(unverified)} agents' last cycle not verified")
    if args.expect_isolation and pairs:
        problems.append("cross-agent cookies")
    if not args.fault_cmd:
        if lost:
            problems.append(f"{sum(lost.values())} lost")
        if failed:
            problems.append(f"{sum(failed.values())} failed calls")
        if checks:
            problems.append(f"{len(checks)} checks failed")
    verdict = "PASS" if not problems else "FAIL: " + ", ".join(problems)
    md += ["", f"Verdict: {verdict}", ""]
    return "\n".join(md), not problems


def shared_tabs(agents):
    """Tabs (by server and handle) whose use by two agents overlapped in time."""
    users = {}
    for a in agents:
        for key, span in a.tabs.items():
            users.setdefault(key, []).append((span[0], span[1], a))
    out = []
    t0 = agents[0].run_.started if agents else 0
    for (server, handle), spans in sorted(users.items(), key=lambda kv: str(kv[0])):
        spans.sort(key=lambda s: s[0])
        for i, (s1, e1, a1) in enumerate(spans):
            for s2, e2, a2 in spans[i + 1:]:
                if s2 < e1:
                    out.append(
                        f"{server} {handle}: {a1.marker} {s1 - t0:.1f}-{e1 - t0:.1f} s, "
                        f"{a2.marker} {s2 - t0:.1f}-{e2 - t0:.1f} s"
                    )
    return out


def md_cell(text):
    return text.replace("|", "/").replace("\n", " ")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--url", required=True, help="the MCP endpoint, e.g. http://127.0.0.1:8930/mcp")
    p.add_argument("--page", required=True, help="the bench page, e.g. http://127.0.0.1:8940/index.html")
    p.add_argument("--agents", type=int, default=32)
    p.add_argument("--calls", type=int, default=50)
    p.add_argument("--servers", type=int, default=2, help="for the report")
    p.add_argument("--farm-limit", default="8", help="for the report")
    p.add_argument("--mode", default="", help="for the report: how the servers reach browsers")
    p.add_argument("--note", default="", help="a line for the top of the report")
    p.add_argument("--md", help="write the report as markdown here")
    p.add_argument("--stats-url", help="HAProxy's CSV stats, e.g. http://127.0.0.1:8939/stats;csv")
    p.add_argument("--expect-isolation", action="store_true", help="a cross-agent cookie fails the run")
    p.add_argument("--fault-cmd", help="shell command run once --fault-at of all calls are done")
    p.add_argument("--fault-at", type=float, default=1 / 3)
    p.add_argument("--tool-timeout", type=float, default=0, help="the tools' timeout argument (s); 0: theirs")
    p.add_argument("--http-timeout", type=float, default=900, help="seconds to wait for one HTTP reply")
    p.add_argument("--busy-deadline", type=float, default=600, help="seconds to keep retrying browser_busy")
    p.add_argument("--transport-retries", type=int, default=3)
    p.add_argument("--max-reinits", type=int, default=5)
    p.add_argument("--backoff", type=float, default=0.5, help="first backoff (s), doubling to 8")
    p.add_argument("--trace", help="write every call and event here, one JSON object a line")
    p.add_argument("--stagger", type=float, default=1.0, help="agents start within this many seconds")
    args = p.parse_args()

    nonce = "".join(random.choice(string.ascii_lowercase + string.digits) for _ in range(4))
    markers = [f"ag{i:02d}-{nonce}" for i in range(args.agents)]
    run = Run(args, markers)
    agents = [Agent(i, run) for i in range(args.agents)]
    print(
        f"farm bench: {args.agents} agents x {args.calls} calls at {args.url} (run {nonce})",
        flush=True,
    )
    for a in agents:
        a.start()
    last = -1
    while any(a.is_alive() for a in agents):
        time.sleep(1)
        if run.done // max(1, run.total // 10) != last:
            last = run.done // max(1, run.total // 10)
            print(f"  {run.done}/{run.total} calls, {now() - run.started:.0f} s", flush=True)
    wall = now() - run.started
    if run.fault_thread is not None:
        run.fault_thread.join(timeout=130)
    text, passed = report(run, agents, wall)
    if run.trace is not None:
        run.trace.close()
    print(text)
    if args.md:
        os.makedirs(os.path.dirname(os.path.abspath(args.md)), exist_ok=True)
        with open(args.md, "w") as f:
            f.write(text)
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
