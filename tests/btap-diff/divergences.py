"""The differences the suite accepts, each one an entry of docs/btap-divergences.md.

An entry: its id (the doc's heading `### D<n>`), its reason (a: tabwire adds without
removing or retyping; b: BrowserTap misbehaves off-label here and tabwire keeps the
contract; c: BrowserTap's own bug, not copied), and the differences it allows: (tool or
label glob, path glob with list indices as [*], kind). Nothing else may differ.
"""

import fnmatch
import re
import sys

DIVERGENCES = {}


def allowed(tool, label, path, kind):
    for key, entry in DIVERGENCES.items():
        for who, where, what in entry["allows"]:
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
