"""How two replies are compared: everything BrowserTap's reply has must be in ours, at the
same place, with the same JSON type; the keys that carry meaning must agree in value.

A difference is (path, kind, detail): kind is `missing` (BrowserTap has the key, we do
not), `type` (both have it, of another JSON type), `value` (a meaning key or a boolean
disagrees), `length` (a list of another length where the length is meaningful) or
`outcome` (ok, error_code, retryable, retry_safe, or reported vs raised disagree).
Keys only we have are never differences: tabwire may add.
"""

import fnmatch

# Keys whose string values are words with meaning (a status, a verdict, a kind), not data.
MEANING_KEYS = {
    "status", "error_code", "code", "delivery_state", "render_state", "recommended_tool",
    "reason", "hit_test", "tag", "type", "role", "operation_status", "mode", "state",
    "result_contract", "action", "area", "source", "kind", "coordinate_space", "format",
    "level", "browser", "window_state",
}

# Lists whose length says something a client reads (how many targets a scan found).
COUNTED_LISTS = {"targets", "frames", "data"}

# Objects keyed by ids each server makes its own (a browser's client id): their entries are
# compared with each other in order, whatever their keys.
KEYED_BY_ID = {"clients"}

# Values that differ between any two runs (ids, times, sizes of things each server names
# its own way); their type is still compared.
MASKED_VALUES = [
    "*session_id*", "*client_id*", "*tab_id*", "*id", "*_at", "*At", "*time*", "*Time*",
    "*ms", "*_ms", "*elapsed*", "*seconds*", "*path*", "*url*", "*Url*", "*version*", "*port*",
    "*pid*", "*token*", "*generation*", "*.expires", "*hash*", "*count*",
]


def json_type(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def masked(path):
    return any(fnmatch.fnmatchcase(path, pattern) for pattern in MASKED_VALUES)


def outcome(envelope):
    """The verdicts two replies must share, whatever their payloads."""
    if not isinstance(envelope, dict):
        return {"ok": None}
    return {
        "ok": envelope.get("ok"),
        "error_code": envelope.get("error_code"),
        "retryable": envelope.get("retryable"),
        "reported": "legacy" in envelope,
    }


# Lists whose members are each browser's own (its targets, its windows): what one server's
# browser holds is not what the other's holds, so their members are compared by the keys
# and types any member has, not one by one, and their lengths not at all.
OWN_LISTS = {"debugger_targets": {"data.data", "legacy.data"}}


def compare(theirs, ours, tool="", list_sample=8):
    """Differences between BrowserTap's envelope and ours."""
    diffs = []
    a, b = outcome(theirs), outcome(ours)
    for key in a:
        if a[key] != b[key]:
            diffs.append((key, "outcome", f"{a[key]!r} there, {b[key]!r} here"))
    if a["ok"] is not None and a["ok"] == b["ok"]:
        walk(theirs, ours, "", diffs, list_sample, OWN_LISTS.get(tool, set()))
    return diffs


def members(items):
    """The keys any member of a list of objects has, each with the type it has."""
    merged = {}
    for item in items:
        if isinstance(item, dict):
            for key, value in item.items():
                merged.setdefault(key, value)
    return merged


def walk(theirs, ours, path, diffs, list_sample, own=frozenset()):
    ta, tb = json_type(theirs), json_type(ours)
    if ta != tb:
        # A null there is "nothing known"; a value here where BrowserTap knew nothing is
        # a retype only when BrowserTap had a value.
        diffs.append((path, "type", f"{ta} there, {tb} here"))
        return
    if ta == "object" and path.rsplit(".", 1)[-1] in KEYED_BY_ID:
        for index, (x, y) in enumerate(zip(list(theirs.values())[:list_sample], list(ours.values()))):
            walk(x, y, f"{path}[{index}]", diffs, list_sample, own)
        if theirs and not ours:
            diffs.append((path, "length", f"{len(theirs)} there, none here"))
    elif ta == "object":
        for key, value in theirs.items():
            sub = f"{path}.{key}" if path else key
            if key not in ours:
                diffs.append((sub, "missing", f"{json_type(value)} there"))
                continue
            walk(value, ours[key], sub, diffs, list_sample, own)
    elif ta == "array" and path in own:
        theirs_keys, ours_keys = members(theirs), members(ours)
        for key, value in theirs_keys.items():
            if key not in ours_keys:
                diffs.append((f"{path}[*].{key}", "missing", f"{json_type(value)} there"))
            elif json_type(value) != json_type(ours_keys[key]) and value is not None:
                diffs.append((f"{path}[*].{key}", "type", f"{json_type(value)} there"))
    elif ta == "array":
        last = path.rsplit(".", 1)[-1]
        if last in COUNTED_LISTS and len(theirs) != len(ours):
            diffs.append((path, "length", f"{len(theirs)} there, {len(ours)} here"))
        for index, (x, y) in enumerate(zip(theirs[:list_sample], ours[:list_sample])):
            walk(x, y, f"{path}[{index}]", diffs, list_sample, own)
        if theirs and not ours and last not in COUNTED_LISTS:
            diffs.append((path, "length", f"{len(theirs)} there, none here"))
    elif ta == "boolean":
        if theirs != ours and not masked(path):
            diffs.append((path, "value", f"{theirs!r} there, {ours!r} here"))
    elif ta == "string":
        key = path.rsplit(".", 1)[-1].split("[", 1)[0]
        if key in MEANING_KEYS and theirs != ours and not masked(path):
            diffs.append((path, "value", f"{theirs!r} there, {ours!r} here"))


def generic(path):
    """A path with its list indices made wildcards, as divergences name them."""
    out, depth = [], 0
    for ch in path:
        if ch == "[":
            depth += 1
            out.append("[*")
        elif ch == "]":
            depth -= 1
            out.append("]")
        elif depth == 0:
            out.append(ch)
    return "".join(out)
