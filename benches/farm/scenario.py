#!/usr/bin/env python3
"""One farm, four sessions, step by step: what `--browser-per-session` promises, shown.

Needs a Browserless farm at FARM (default http://127.0.0.1:3000, token `farm`) started
with CONCURRENT=2 QUEUED=1, a `tabwire --http URL --browser-per-session --cdp-endpoint
ws://…/chromium?token=farm`, and a page to open:

    python3 benches/farm/scenario.py http://127.0.0.1:8941/mcp http://127.0.0.1:8951/index.html

It prints, in order: a session that has made no page call holds no farm browser (A);
A and B get browsers; C waits in the farm's queue and is served once A's session ends
(its DELETE gives A's browser back); D, with the queue full, is told `browser_busy` with
the farm's words; B's farm browser is killed through the farm's own `/kill`, and B's next
reply says `browser_lost` and `state_carried_over: false` while C's says nothing; once
every session has ended the farm runs no browser.
"""

import json
import os
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agents import Wire  # noqa: E402  (the bench's own MCP client)

URL, PAGE = sys.argv[1], sys.argv[2]
FARM = os.environ.get("FARM", "http://127.0.0.1:3000")
TOKEN = os.environ.get("FARM_TOKEN", "farm")


def farm(path):
    with urllib.request.urlopen(f"{FARM}/{path}?token={TOKEN}", timeout=5) as answer:
        return json.loads(answer.read() or b"null")


def running():
    """The farm's browsers running and connections queued."""
    pressure = farm("pressure")["pressure"]
    return pressure["running"], pressure["queued"]


def wait_until(what, condition, seconds=30):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            sys.exit(f"gave up waiting for {what}")
        time.sleep(0.1)


class Session:
    """One MCP session over Streamable HTTP."""

    def __init__(self, name):
        self.wire, self.next_id = Wire(URL, 180), 0
        hello = {
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": name, "version": "1"}},
        }
        _, headers, _, _ = self.wire.send("POST", hello, 0)
        self.wire.session = headers["mcp-session-id"]
        self.wire.send("POST", {"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, tool, arguments):
        """(seconds it took, the reply's envelope)."""
        self.next_id += 1
        started = time.monotonic()
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                   "params": {"name": tool, "arguments": arguments}}
        _, _, _, reply = self.wire.send("POST", request, self.next_id)
        envelope = json.loads(reply["result"]["content"][0]["text"])
        return round(time.monotonic() - started, 2), envelope

    def end(self):
        status, *_ = self.wire.send("DELETE")
        return status


def losses(envelope):
    return {k: v for k, v in envelope["diagnostics"].items()
            if k in ("browser_lost", "state_carried_over")}


a = Session("a")
state = a.call("get_setup_status", {})[1]["data"]["link_state"]
print(f"A before any page call: link_state {state}; farm running/queued {running()}")
print(f"A opens a page in {a.call('open_url', {'url': PAGE + '?agent=a'})[0]} s; farm {running()}")
b = Session("b")
print(f"B opens a page in {b.call('open_url', {'url': PAGE + '?agent=b'})[0]} s; farm {running()}")

c, c_result = Session("c"), {}
waiting = threading.Thread(target=lambda: c_result.update(
    done=c.call("open_url", {"url": PAGE + "?agent=c", "timeout": 60})))
waiting.start()
wait_until("C to queue at the farm", lambda: running()[1] >= 1)
print(f"C is queued; farm {running()}")
d = Session("d")
took, refused = d.call("open_url", {"url": PAGE + "?agent=d", "timeout": 5})
print(f"D, the queue full, in {took} s: {json.dumps({k: refused[k] for k in ('ok', 'error')})}")
print(f"A ends its session: DELETE {a.end()}")
waiting.join()
took, served = c_result["done"]
print(f"C served after {took} s: ok {served['ok']}; farm {running()}")

oldest = sorted(farm("sessions"), key=lambda s: s.get("startedOn", 0))[0]
urllib.request.urlopen(f"{FARM}/kill/{oldest['id']}?token={TOKEN}", timeout=5).close()
print("B's farm browser killed through the farm")
took, after = b.call("execute_js", {"script": "location.href"})
print(f"B's next call in {took} s: ok {after['ok']}, {json.dumps(losses(after))}")
took, c_after = c.call("execute_js", {"script": "document.cookie"})
print(f"C's next call: ok {c_after['ok']}, {c_after['data']['js_return']!r}, losses told {losses(c_after)}")
print(f"DELETE B {b.end()}, C {c.end()}, D {d.end()}")
wait_until("the farm to run no browser", lambda: running()[0] == 0, 10)
print(f"every session ended: farm {running()}")
