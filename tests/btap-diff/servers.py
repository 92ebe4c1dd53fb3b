"""The two servers the differential suite compares, and the pages they both load.

BrowserTap 0.5.4 runs as its recipe says (shared/reference/btap-real.md): its bridge
daemon, a headless Chromium that loads the extension shipped in its wheel, and its stdio
MCP server. tabwire runs as a BrowserTap client would start it: `tabwire` over stdio with
a throw-away profile, the btap face, exact replies.
"""

import asyncio
import contextlib
import functools
import http.server
import json
import os
import shutil
import socketserver
import subprocess
import sys
import threading
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


class Pages:
    """Serves tests/btap-diff/pages on loopback. The same server is another site when
    reached as `localhost` instead of `127.0.0.1`: that gives a cross-origin frame."""

    def __init__(self):
        handler = functools.partial(Quiet, directory=str(HERE / "pages"))
        socketserver.ThreadingTCPServer.allow_reuse_address = True
        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, name, host="127.0.0.1"):
        return f"http://{host}:{self.port}/{name}"

    def close(self):
        self.server.shutdown()


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def end_headers(self):
        # Pages change between runs; a cached copy would hide that.
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    sys.exit("btap-diff: no Chromium on PATH")


class Server:
    """One MCP client session to one server, kept open across the run."""

    def __init__(self, name):
        self.name = name
        self.session = None
        self.instructions = ""
        self.stack = contextlib.AsyncExitStack()

    async def open(self, command, args, env):
        params = StdioServerParameters(command=command, args=args, env=env)
        errlog = open(self.workdir / "server.log", "w")
        read, write = await self.stack.enter_async_context(stdio_client(params, errlog=errlog))
        self.session = await self.stack.enter_async_context(ClientSession(read, write))
        init = await self.session.initialize()
        self.instructions = init.instructions or ""
        self.capabilities = init.capabilities

    async def call(self, tool, arguments, timeout=90):
        """Calls a tool; returns (envelope, raw result). The envelope is the
        structuredContent (what the text content also says), or the text parsed."""
        result = await asyncio.wait_for(self.session.call_tool(tool, arguments), timeout)
        envelope = result.structuredContent
        texts = [c.text for c in result.content if c.type == "text"]
        if envelope is None and texts:
            try:
                envelope = json.loads(texts[0])
            except ValueError:
                envelope = {"__text__": texts[0]}
        return envelope, result

    async def close(self):
        # Closed in the task that opened it (the MCP client's task group insists).
        with contextlib.suppress(Exception):
            await self.stack.aclose()


class BrowserTap(Server):
    def __init__(self, venv, workdir):
        super().__init__("browsertap")
        self.venv = Path(venv)
        self.workdir = workdir
        self.browser = None
        self.env = dict(os.environ)
        # Its token, pid file and log, and the files it saves (~/Downloads/browsertap),
        # stay inside this run's folder.
        self.env["BROWSERTAP_STATE_DIR"] = str(workdir / "state")
        self.env["HOME"] = str(workdir / "home")
        (workdir / "home").mkdir(parents=True, exist_ok=True)

    def tool(self, name):
        return str(self.venv / "bin" / name)

    def extension_dir(self):
        out = subprocess.run(
            [self.tool("python"), "-c",
             "import browsertap_mcp, pathlib; print(pathlib.Path(browsertap_mcp.__file__).parent / 'chrome_extension')"],
            capture_output=True, text=True, check=True)
        return out.stdout.strip()

    def doctor(self):
        out = subprocess.run([self.tool("browsertap"), "doctor"], env=self.env,
                             capture_output=True, text=True, timeout=90)
        try:
            return json.loads(out.stdout)
        except ValueError:
            return {}

    async def start(self):
        await self.launch()
        await self.open(self.tool("browsertap"), [], self.env)

    async def launch(self):
        """The bridge daemon and the browser, linked; no MCP session yet."""
        self.doctor()  # starts the bridge daemon
        profile = self.workdir / "profile"
        self.browser = subprocess.Popen(
            [chromium(), "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", f"--user-data-dir={profile}", "--window-size=1280,900",
             "--disable-features=DisableLoadExtensionCommandLineSwitch",
             f"--load-extension={self.extension_dir()}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=open(self.workdir / "chromium.log", "w"))
        # The extension's worker dials the bridge when it starts; doctor lists it then.
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            clients = self.doctor().get("diagnosis", {}).get("clients") or {}
            if clients:
                break
            await asyncio.sleep(0.5)
        else:
            raise RuntimeError("BrowserTap's extension never reached its bridge")

    async def stop(self):
        await self.close()
        with contextlib.suppress(Exception):
            subprocess.run([self.tool("browsertap"), "bridge", "--stop"], env=self.env,
                           capture_output=True, timeout=30)
        if self.browser:
            self.browser.terminate()
            with contextlib.suppress(Exception):
                self.browser.wait(10)


class Tabwire(Server):
    def __init__(self, binary, workdir):
        super().__init__("tabwire")
        self.binary = binary
        self.workdir = workdir

    async def start(self):
        files = self.workdir / "files"
        files.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        env.setdefault("RUST_LOG", "warn")
        # As a client starts it: its sessions served by the broker that owns the browser
        # (as BrowserTap's are by its bridge daemon), on a profile and state of this run's
        # own; the broker leaves with the client.
        env["XDG_STATE_HOME"] = str(self.workdir / "state")
        await self.open(self.binary, [
            "--user-data-dir", str(self.workdir / "profile"), "--broker-grace", "0",
            "--headless", "--face", "btap", "--replies", "exact",
            "--output-dir", str(self.workdir / "out"),
            "--upload-root", str(Path(os.environ["BTAP_DIFF_FILES"])),
            "--download-root", str(Path(os.environ["BTAP_DIFF_FILES"])),
            "--browser-arg=--window-size=1280,900",
        ], env)

    async def stop(self):
        await self.close()
