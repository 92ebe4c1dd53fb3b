"""The differences the suite accepts, each one an entry of docs/btap-divergences.md.

An entry: its id (the doc's heading `### D<n>`), its reason (a: tabwire adds without
removing or retyping; b: BrowserTap misbehaves off-label here and tabwire keeps the
contract; c: BrowserTap's own bug, not copied), and the differences it allows: (tool or
label glob, path glob with list indices as [*], kind). Nothing else may differ.
"""

import fnmatch
import re
import sys

DIVERGENCES = {
    "D2": {"reason": "c", "allows": [
        ("open_url bad scheme", "*", "outcome"),
    ]},
    "D3": {"reason": "c", "allows": [
        ("page_type into the focused field", "data.active_element.contentEditable", "value"),
        ("page_type into the focused field", "data.active_element.type", "value"),
    ]},
    "D4": {"reason": "c", "allows": [
        ("execute_js navigates", "*status", "value"),
    ]},
    "D5": {"reason": "c", "allows": [
        ("execute_js with a transient", "*suggestion", "missing"),
    ]},
    "D6": {"reason": "a", "allows": []},
    "D1": {"reason": "b", "allows": [
        ("page_click opens a confirm", "*", "outcome"),
        ("execute_js the confirm's answer", "*", "*"),
        ("handle_dialog manual with a dialog open", "*", "*"),
        ("handle_dialog accept the click's confirm", "*", "*"),
    ]},
}

# D100-D199: scan_page.
# Extra targets only on pages with such controls; none in the suite, so nothing is allowed.
DIVERGENCES["D100"] = {"reason": "a", "allows": []}

# D200-D299: tabs, setup, the MCP surface.
DIVERGENCES["D200"] = {"reason": "c", "allows": [
    ("list_tabs after closing", "data.default_session_id", "type"),
    ("list_tabs after closing", "default_session_id", "type"),
]}
DIVERGENCES["D201"] = {"reason": "b", "allows": [
    ("open_url with no tab", "ok", "outcome"),
    ("open_url with no tab", "error_code", "outcome"),
]}
DIVERGENCES["D202"] = {"reason": "c", "allows": [("open_new_tab bad scheme", "*", "*")]}
DIVERGENCES["D203"] = {"reason": "c", "allows": [
    ("switch_tab by url_pattern matching none", "error_code", "*"),
    ("switch_tab by url_pattern matching none", "error.code", "value"),
]}
DIVERGENCES["D204"] = {"reason": "b", "allows": [("list_all_tabs", "data.data[*].active", "value")]}

# D300-D399: browser data, captures, raw CDP, extensions, bookmarks, desktop.
DIVERGENCES["D300"] = {"reason": "c", "allows": [
    ("network_capture_stop", "data.filtered", "value"),
    ("network_capture_stop", "filtered", "value"),
]}
DIVERGENCES["D301"] = {"reason": "c", "allows": [
    ("upload_files missing file", "error_code", "*"),
    ("upload_files missing file", "error.code", "value"),
]}


def allowed(tool, label, path, kind):
    for key, entry in DIVERGENCES.items():
        for who, where, what in entry["allows"]:
            # A path's `[*]` (any list index, as compare.generic writes it) is literal
            # brackets, not a character class.
            where = where.replace("[", "[[]")
            if (fnmatch.fnmatchcase(tool, who) or fnmatch.fnmatchcase(label, who)) \
                    and fnmatch.fnmatchcase(path, where) and (what == "*" or what == kind):
                return key
    return None


def check_documented(doc):
    """Every entry here is a heading of the doc, with the same reason."""
    text = doc.read_text() if doc.exists() else ""
    headings = dict(re.findall(r"^### (D\d+) \(([abc])\)", text, re.M))
    for key, entry in DIVERGENCES.items():
        if headings.get(key) != entry["reason"]:
            sys.exit(f"btap-diff: divergence {key} ({entry['reason']}) is not documented in {doc}")
