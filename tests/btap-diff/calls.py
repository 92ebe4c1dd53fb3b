"""The calls the suite sends to both servers, in order, as a BrowserTap client would.

A call's arguments are a dict, or a function of the server's own context (its tab's
session_id, a locator its own scan handed out), so each server is driven by what it
answered itself. `keep` stores something of a reply for later calls; `check: False`
runs a call for its effect without comparing it (waiting for a page to settle, say).
"""

import json
import os


class Step:
    def __init__(self, tool, args=None, label=None, keep=None, check=True, after=None):
        self.tool = tool
        self.args = args if args is not None else {}
        self.label = label or tool
        self.keep = keep
        self.check = check
        self.after = after

    def arguments(self, ctx):
        return self.args(ctx) if callable(self.args) else self.args


class Context:
    """What one server has told the suite so far."""

    def __init__(self, pages, files):
        self.pages = pages
        self.files = files
        self.values = {}

    def url(self, name, host="127.0.0.1"):
        return self.pages.url(name, host)

    def __getitem__(self, key):
        return self.values[key]


def data(env):
    if not isinstance(env, dict):
        return {}
    return env.get("data") or env.get("legacy") or {}


def target_locator(env, predicate):
    """The locator of the first scanned target that matches."""
    for target in data(env).get("observation", {}).get("targets", []):
        if predicate(target):
            return target.get("locator")
    return None


def frame_path(env, predicate):
    for frame in data(env).get("observation", {}).get("frames", []):
        if predicate(frame):
            return frame.get("frame")
    return None


def keep_tab(ctx, env):
    ctx.values["tab"] = data(env).get("session_id")
    ctx.values["owner"] = data(env).get("owner_id")


def keep_second(ctx, env):
    ctx.values["second"] = data(env).get("session_id")
    ctx.values["second_owner"] = data(env).get("owner_id")


def keep(name, fn):
    def store(ctx, env):
        ctx.values[name] = fn(env)
    return store


def on_tab(extra=None):
    """Arguments naming the tab the suite opened, plus `extra`."""
    def args(ctx):
        out = {"session_id": ctx["tab"]}
        out.update(extra(ctx) if callable(extra) else (extra or {}))
        return out
    return args


def on_other(name, extra=None):
    """Arguments naming another tab the suite opened (kept as `name`), plus `extra`."""
    def args(ctx):
        out = {"session_id": ctx[name]}
        out.update(extra(ctx) if callable(extra) else (extra or {}))
        return out
    return args


def plan():
    steps = _steps()
    labels = [step.label for step in steps]
    duplicates = {label for label in labels if labels.count(label) > 1}
    assert not duplicates, f"labels must be unique: {duplicates}"
    return steps


def _steps():
    steps = [
        # Setup and profile.
        Step("get_automation_profile"),
        Step("set_automation_profile", {"mode": "lab"}),
        Step("set_automation_profile", {"mode": "reckless"}, label="set_automation_profile bad mode"),
        Step("extension_path"),
        # Tabs: one the suite owns, on the form page.
        Step("open_new_tab", lambda c: {"url": c.url("form.html"), "active": True}, keep=keep_tab),
        Step("switch_tab", on_tab()),
        Step("activate_tab", on_tab()),
        Step("list_tabs"),
        Step("list_all_tabs"),
        Step("get_setup_status"),
        Step("switch_tab", {"session_id": "nobody:404"}, label="switch_tab unknown session"),
        # url_pattern is a substring of the URL (not a glob), matching exactly one tab.
        Step("switch_tab", {"url_pattern": "form.html"}, label="switch_tab by url_pattern"),
        Step("switch_tab", {"url_pattern": "*form.html*"}, label="switch_tab by url_pattern matching none"),
        # Reading the form.
        Step("scan_page", on_tab(), keep=keep("form_scan", lambda e: e)),
        Step("scan_page", on_tab({"text_only": True}), label="scan_page text_only"),
        Step("scan_page", on_tab({"maxchars": 200}), label="scan_page maxchars 200"),
        Step("scroll_page", on_tab({"to": "bottom"})),
        Step("scroll_page", on_tab({"to": "top"}), label="scroll_page top"),
        Step("scroll_page", on_tab({"to": "sideways"}), label="scroll_page bad to"),
        # Input by the locators the scan handed out, and by CSS.
        Step("page_type", on_tab(lambda c: {
            "selector": target_locator(c["form_scan"], lambda t: t.get("name") == "Your name" or "name" in json.dumps(t.get("locator"))) or "#name",
            "text": "Ann"}), label="page_type scanned locator"),
        Step("page_type", on_tab({"selector": "#note", "text": "leave at door", "clear": True}), label="page_type textarea clear"),
        Step("page_type", on_tab({"selector": "#colour", "text": "Blue"}), label="page_type into select"),
        Step("page_type", on_tab({"selector": "#ro", "text": "x"}), label="page_type readonly"),
        Step("page_type", on_tab({"selector": "#nothing-here", "text": "x", "timeout": 2}), label="page_type missing"),
        Step("page_type", on_tab({"selector": "##bad((", "text": "x"}), label="page_type invalid selector"),
        Step("page_click", on_tab({"selector": "#count"}), label="page_click css"),
        Step("page_click", on_tab(lambda c: {"selector": target_locator(c["form_scan"], lambda t: t.get("name") == "Count") or "#count"}), label="page_click scanned locator"),
        Step("page_click", on_tab({"selector": {"role": "button", "name": "Count"}}), label="page_click role locator"),
        Step("page_click", on_tab({"selector": "#gift"}), label="page_click checkbox"),
        Step("page_click", on_tab({"selector": "#off"}), label="page_click disabled"),
        Step("page_click", on_tab({"selector": "#hidden-under"}), label="page_click obscured"),
        Step("page_click", on_tab({"selector": "#nothing-here", "timeout": 2}), label="page_click missing"),
        Step("page_click", on_tab({"x": 30, "y": 30}), label="page_click coordinates"),
        Step("page_click", on_tab({}), label="page_click nothing"),
        Step("page_press", on_tab({"keys_csv": "Tab"})),
        Step("page_press", on_tab({"keys_csv": "Control+a,Backspace"}), label="page_press chord"),
        Step("page_press", on_tab({"keys_csv": ""}), label="page_press empty"),
        Step("page_drag", on_tab({"x1": 10, "y1": 10, "x2": 60, "y2": 60, "duration": 0.1})),
        Step("wait_for", on_tab({"selector": "#out", "timeout": 5})),
        Step("wait_for", on_tab({"text": "Order form", "timeout": 5}), label="wait_for text"),
        Step("wait_for", on_tab({"js": "document.title.length > 0", "timeout": 5}), label="wait_for js"),
        Step("wait_for", on_tab({"selector": "#never", "timeout": 1}), label="wait_for timeout"),
        Step("wait_for", on_tab({"selector": "#never", "gone": True, "timeout": 2}), label="wait_for gone"),
        Step("wait_for", on_tab({}), label="wait_for nothing"),
        Step("wait_for_url", on_tab({"url_pattern": "*form.html*", "timeout": 5})),
        Step("wait_for_url", on_tab({"url_pattern": "*nowhere*", "timeout": 1}), label="wait_for_url timeout"),
        # Scripts.
        Step("execute_js", on_tab({"script": "return 6 * 7"})),
        Step("execute_js", on_tab({"script": "return {a: null, b: [1, 'x'], c: {}}"}), label="execute_js object"),
        Step("execute_js", on_tab({"script": "document.getElementById('out').textContent = 'changed'; return 1"}), label="execute_js changes dom"),
        Step("execute_js", on_tab({"script": "throw new Error('boom')"}), label="execute_js throws"),
        Step("execute_js", on_tab({"script": "return new Promise(r => setTimeout(() => r('late'), 3000))", "wait": False}),
             label="execute_js no wait", keep=keep("op", lambda e: data(e).get("operation_id") or (e or {}).get("operation_id"))),
        Step("get_execute_js_result", lambda c: {"operation_id": c.values.get("op") or "none", "timeout": 6}),
        Step("get_execute_js_result", {"operation_id": "op-unknown"}, label="get_execute_js_result unknown"),
        Step("execute_js", on_tab({"script": "return 1", "dialog_policy": "explode"}), label="execute_js bad dialog_policy"),
        # Navigation.
        Step("open_url", on_tab(lambda c: {"url": c.url("links.html")})),
        Step("scan_page", on_tab(), label="scan_page thirty links", keep=keep("links_scan", lambda e: e)),
        Step("page_click", on_tab(lambda c: {"selector": target_locator(c["links_scan"], lambda t: t.get("name") == "Link number 3") or {"text": "Link number 3"}}),
             label="page_click link navigates"),
        Step("wait_for_url", on_tab({"url_pattern": "form.html", "timeout": 5}), label="wait_for_url after the link", check=False),
        Step("open_url", on_tab({"url": "http://127.0.0.1:9/unreachable"}), label="open_url unreachable"),
        Step("open_url", on_tab({"url": "ftp://example.invalid/x"}), label="open_url bad scheme"),
        Step("open_url", on_tab(lambda c: {"url": c.url("form.html")}), label="open_url back to form", check=False),
        # Frames.
        Step("open_url", on_tab(lambda c: {"url": c.url("frames.html")}), label="open_url frames"),
        Step("wait_for", on_tab({"js": "document.getElementById('cross').contentWindow.length === 0", "timeout": 5}), label="wait_for the frames", check=False),
        Step("scan_page", on_tab(), label="scan_page frames", keep=keep("frames_scan", lambda e: e)),
        Step("scan_page", on_tab(lambda c: {"frame": frame_path(c["frames_scan"], lambda f: "cross" not in (f.get("url") or f.get("src") or "")) or ["#same"]}),
             label="scan_page same-origin frame", keep=keep("same_scan", lambda e: e)),
        Step("page_click", on_tab(lambda c: {"selector": target_locator(c["same_scan"], lambda t: t.get("name") == "Inner button") or {"css": "#inner-go", "frame": ["#same"]}}),
             label="page_click in same-origin frame by scanned locator"),
        Step("scan_page", on_tab(lambda c: {"frame": frame_path(c["frames_scan"], lambda f: "cross" in (f.get("url") or f.get("src") or "")) or ["#cross"]}),
             label="scan_page cross-origin frame", keep=keep("cross_scan", lambda e: e)),
        Step("page_type", on_tab(lambda c: {"selector": target_locator(c["cross_scan"], lambda t: t.get("tag") == "input") or {"css": "#inner-field", "frame": ["#cross"]}, "text": "far"}),
             label="page_type in cross-origin frame by scanned locator"),
        Step("page_click", on_tab({"selector": {"css": "#inner-go", "frame": ["#nope"]}, "timeout": 2}), label="page_click missing frame"),
        # Dialogs.
        Step("open_url", on_tab(lambda c: {"url": c.url("dialogs.html")}), label="open_url dialogs", check=False),
        Step("handle_dialog", on_tab({"action": "accept", "timeout": 1}), label="handle_dialog with none open"),
        Step("handle_dialog", on_tab({"action": "wave"}), label="handle_dialog bad action"),
        Step("execute_js", on_tab({"script": "return confirm('Really?')", "dialog_policy": "accept"}), label="execute_js confirm accepted"),
        Step("execute_js", on_tab({"script": "return prompt('Name?', 'Bo')", "dialog_policy": "dismiss"}), label="execute_js prompt dismissed"),
        Step("resolve_leave_dialog", on_tab(), label="resolve_leave_dialog with none open"),
        # A confirm() behind a button: the click opens it, the agent answers it. In a tab
        # of its own: BrowserTap loses the dialog (D1) and its page stays blocked on it.
        Step("open_new_tab", lambda c: {"url": c.url("dialogs.html"), "active": True}, label="open_new_tab for a dialog",
             check=False, keep=lambda c, e: c.values.update(dlg=data(e).get("session_id"), dlg_owner=data(e).get("owner_id"))),
        Step("page_click", on_other("dlg", {"selector": "#ask", "timeout": 5}), label="page_click opens a confirm"),
        Step("handle_dialog", on_other("dlg", {"action": "manual"}), label="handle_dialog manual with a dialog open"),
        Step("handle_dialog", on_other("dlg", {"action": "accept"}), label="handle_dialog accept the click's confirm"),
        Step("execute_js", on_other("dlg", {"script": "return document.getElementById('answer').textContent"}), label="execute_js the confirm's answer"),
        Step("close_tabs", lambda c: {"tab_id": c.values.get("dlg"), "owner_id": c.values.get("dlg_owner")}, label="close_tabs the dialog's tab", check=False),
        Step("activate_tab", on_tab(), label="activate_tab back", check=False),
        # Cookies and storage.
        Step("set_cookies", on_tab(lambda c: {"cookies": [{"name": "flavour", "value": "oat", "url": c.url("")}]})),
        Step("get_cookies", on_tab()),
        Step("delete_cookies", on_tab(lambda c: {"name": "flavour", "url": c.url("")})),
        Step("set_cookies", on_tab({"cookies": "not json"}), label="set_cookies bad"),
        Step("storage_set", on_tab({"key": "k1", "value": "v1"})),
        Step("storage_set", on_tab({"key": "k2", "value": "v2", "area": "session"}), label="storage_set session"),
        Step("storage_get", on_tab({"key": "k1"})),
        Step("storage_get", on_tab({}), label="storage_get all"),
        Step("storage_get", on_tab({"area": "session"}), label="storage_get session"),
        Step("storage_get", on_tab({"area": "cloud"}), label="storage_get bad area"),
        # Captures and files.
        Step("capture_page_screenshot", on_tab({"save_path": "diff-shot.png"})),
        Step("capture_page_screenshot", on_tab({"format": "gif"}), label="capture_page_screenshot bad format"),
        Step("save_pdf", on_tab({"save_path": "diff.pdf"})),
        Step("save_pdf", on_tab({"save_path": "/etc/diff.pdf"}), label="save_pdf absolute path"),
        Step("open_url", on_tab(lambda c: {"url": c.url("upload.html")}), label="open_url upload", check=False),
        Step("upload_files", on_tab(lambda c: {"selector": "#file", "paths": [os.path.join(c.files, "upload.txt")]})),
        Step("upload_files", on_tab(lambda c: {"selector": "#file", "paths": [os.path.join(c.files, "missing.txt")]}), label="upload_files missing file"),
        Step("download_file", on_tab(lambda c: {"url": c.url("data.txt"), "timeout": 20})),
        Step("download_file", on_tab(lambda c: {"url": c.url("data.txt"), "directory": "relative/dir"}), label="download_file relative directory"),
        # Network and console captures.
        Step("network_capture_start", on_tab()),
        Step("execute_js", on_tab({"script": "return fetch('data.txt').then(r => r.text())"}), label="execute_js fetch", check=False),
        Step("network_capture_stop", on_tab()),
        Step("network_capture_stop", on_tab(), label="network_capture_stop not started"),
        Step("console_capture_start", on_tab()),
        Step("execute_js", on_tab({"script": "console.log('hello', 1); console.warn('careful'); return true"}), label="execute_js console", check=False),
        Step("get_console_messages", on_tab()),
        Step("console_capture_stop", on_tab()),
        Step("get_console_messages", on_tab(), label="get_console_messages after stop"),
        # Site permissions.
        Step("set_site_permission", on_tab(lambda c: {"permission": "geolocation", "setting": "allow", "origin": c.url("")[:-1], "duration_seconds": 60})),
        Step("set_site_permission", on_tab({"permission": "telepathy", "setting": "allow"}), label="set_site_permission bad permission"),
        Step("reset_site_permissions", on_tab()),
        # Raw CDP.
        Step("cdp_command", on_tab({"method": "Runtime.evaluate", "params_json": json.dumps({"expression": "1+1", "returnByValue": True})})),
        Step("cdp_command", on_tab({"method": "Browser.close"}), label="cdp_command blocked"),
        Step("cdp_command", on_tab({"method": "Nope.nothing"}), label="cdp_command unknown method"),
        Step("cdp_command", on_tab({"method": "Runtime.evaluate", "params_json": "{not json"}), label="cdp_command bad params"),
        Step("cdp_batch", on_tab({"batch_json": json.dumps({"cmd": "batch", "commands": [
            {"cmd": "cdp", "method": "DOM.getDocument", "params": {"depth": 0}},
            {"cmd": "cdp", "method": "DOM.querySelector", "params": {"nodeId": "$0.root.nodeId", "selector": "#file"}},
        ]})})),
        Step("cdp_batch", on_tab({"batch_json": json.dumps({"cmd": "batch", "commands": [{"cmd": "cdp", "method": "Browser.close"}]})}), label="cdp_batch blocked"),
        Step("cdp_batch", on_tab({"batch_json": "[]"}), label="cdp_batch bad json"),
        Step("debugger_targets", on_tab()),
        # The browser's own data.
        Step("list_extensions", on_tab()),
        Step("set_extension_enabled", on_tab({"extension_id": "a" * 32, "enabled": False}), label="set_extension_enabled unknown"),
        Step("uninstall_extension", on_tab({"extension_id": "a" * 32, "show_confirm_dialog": False}), label="uninstall_extension unknown"),
        Step("call_extension", on_tab({"extension_id": "a" * 32, "message_json": "{}"}), label="call_extension unknown"),
        Step("create_bookmark", on_tab(lambda c: {"title": "Diff suite", "url": c.url("form.html")}),
             keep=keep("bookmark", lambda e: (data(e).get("data") or {}).get("id") or data(e).get("id"))),
        Step("get_bookmarks", on_tab()),
        Step("remove_bookmark", lambda c: {"bookmark_id": c.values.get("bookmark") or "0"}),
        Step("remove_bookmark", {"bookmark_id": "999999"}, label="remove_bookmark unknown"),
        # Desktop pair: no such dialog can exist here.
        Step("inspect_native_file_dialog", {}, label="inspect_native_file_dialog without opt-in"),
        Step("inspect_native_file_dialog", {"desktop_opt_in": True}),
        Step("cancel_native_file_dialog", {"ticket": "t", "desktop_opt_in": True}),
        # A page of richer controls: editable text, radios, a multi-select, shadow DOM.
        # In a fresh tab of its own, brought to the front: BrowserTap's input to a tab that
        # has been through the steps above no longer reaches the page's handlers here.
        Step("open_new_tab", lambda c: {"url": c.url("rich.html"), "active": True}, label="open_new_tab rich",
             keep=lambda c, e: c.values.update(rich=data(e).get("session_id"), rich_owner=data(e).get("owner_id"))),
        Step("activate_tab", on_other("rich", {}), label="activate_tab rich"),
        Step("scan_page", on_other("rich", {}), label="scan_page rich", keep=keep("rich_scan", lambda e: e)),
        Step("scan_page", on_other("rich", {"max_targets": 3}), label="scan_page max_targets 3"),
        Step("page_type", on_other("rich", {"selector": "#editor", "text": " more"}), label="page_type contenteditable"),
        Step("page_click", on_other("rich", {"selector": "#small"}), label="page_click radio"),
        Step("page_click", on_other("rich", {"selector": "#mail"}), label="page_click focuses a field"),
        Step("page_type", on_other("rich", {"text": "a@b.c"}), label="page_type into the focused field"),
        Step("page_click", on_other("rich", {"selector": "#icon", "offset_x": 2, "offset_y": 2}), label="page_click with offsets"),
        Step("page_click", on_other("rich", {"selector": "#icon", "clicks": 2}), label="page_click double"),
        Step("page_click", on_other("rich", {"selector": "#icon", "button": "right"}), label="page_click right button"),
        Step("page_click", on_other("rich", {"selector": "#icon", "button": "sideways"}), label="page_click bad button"),
        Step("page_click", on_other("rich", {"selector": {"css": "#inside", "shadow": ["my-card"]}}), label="page_click in a shadow root"),
        Step("page_click", on_other("rich", {"selector": {"role": "button", "name": "Nothing like this"}, "timeout": 1}), label="page_click role locator missing"),
        Step("page_click", on_other("rich", {"selector": {"text": "More"}}), label="page_click text locator"),
        Step("wait_for", on_other("rich", {"text": "Hidden details", "timeout": 3}), label="wait_for text after opening details"),
        Step("execute_js", on_other("rich", {"script": "return document.getElementById('status').textContent"}), label="execute_js reads the status line"),
        Step("wait_for", on_other("rich", {"text": "ready", "gone": True, "timeout": 3}), label="wait_for text gone"),
        Step("scroll_page", on_other("rich", {"to": "#far"}), label="scroll_page to a selector"),
        Step("scroll_page", on_other("rich", {"to": "500"}), label="scroll_page to a pixel offset"),
        Step("execute_js", on_other("rich", {"script": "window.toast()"}), label="execute_js with a transient"),
        Step("execute_js", on_other("rich", {"script": "return undefined"}), label="execute_js undefined"),
        Step("execute_js", on_other("rich", {"script": "return 'x'.repeat(30000)"}), label="execute_js large result"),
        Step("execute_js", on_other("rich", {"script": "document.title"}), label="execute_js expression"),
        Step("page_type", on_other("rich", {"selector": "#q", "text": "cats", "submit_key": "Enter"}), label="page_type submits a search"),
        Step("wait_for_url", on_other("rich", {"url_pattern": "q=cats", "timeout": 5}), label="wait_for_url the search"),
        Step("open_url", on_other("rich", lambda c: {"url": c.url("rich.html")}), label="open_url rich again", check=False),
        Step("execute_js", on_other("rich", lambda c: {"script": f"location.href = {json.dumps(c.url('form.html'))}; return 1"}), label="execute_js navigates"),
        Step("page_drag", on_other("rich", {"x1": 10, "y1": 10, "x2": 20, "y2": 20, "button": "sideways"}), label="page_drag bad button"),
        Step("get_cookies", on_other("rich", {"tab_id": 987654321}), label="get_cookies unknown tab_id"),
        Step("capture_page_screenshot", on_other("rich", {"format": "jpeg", "quality": 50}), label="capture_page_screenshot jpeg"),
        Step("capture_page_screenshot", on_other("rich", {"clip": {"x": 0, "y": 0, "width": 100, "height": 50}}), label="capture_page_screenshot clip"),
        Step("close_tabs", lambda c: {"tab_id": c.values.get("rich"), "owner_id": c.values.get("rich_owner")}, label="close_tabs rich", check=False),
        Step("activate_tab", on_tab(), label="activate_tab after rich", check=False),
        # Tabs again: a second tab, closing, ownership.
        Step("open_new_tab", lambda c: {"url": c.url("links.html")}, label="open_new_tab second",
             keep=keep_second),
        Step("open_new_tab", {"url": "javascript:alert(1)"}, label="open_new_tab bad scheme"),
        # Closing takes the owner_id open_new_tab handed out (the capability); without it
        # a close is refused whatever the tab.
        Step("close_tabs", lambda c: {"tab_id": c.values.get("second") or "none"}, label="close_tabs without owner"),
        Step("close_tabs", lambda c: {"tab_id": c.values.get("second") or "none",
                                      "owner_id": c.values.get("second_owner") or "none"}),
        Step("close_tabs", lambda c: {"tab_id": "nobody:404", "owner_id": c.values.get("owner") or "none"},
             label="close_tabs unknown"),
        Step("activate_tab", {"session_id": "nobody:404"}, label="activate_tab unknown"),
        Step("close_tabs", lambda c: {"tab_id": c["tab"], "owner_id": c.values.get("owner") or "none"},
             label="close_tabs own last"),
        Step("list_tabs", label="list_tabs after closing"),
        Step("open_url", lambda c: {"url": c.url("form.html")}, label="open_url with no tab"),
    ]
    return steps
