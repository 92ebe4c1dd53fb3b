"""The differential suite: the same calls to the real BrowserTap 0.5.4 and to tabwire's
btap face, every reply compared (compare.py), every difference either gone or written
down in docs/btap-divergences.md (divergences.py names which entry allows it).

    python tests/btap-diff/run.py [--tabwire target/debug/tabwire] [--venv DIR] [--only LABEL]

Exits 0 when every difference is listed, 1 otherwise. The report (every call, both
replies, the differences) is written to target/btap-diff/report.json.
"""

import argparse
import asyncio
import fcntl
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from calls import Context, plan  # noqa: E402
from compare import compare, generic  # noqa: E402
from divergences import DIVERGENCES, allowed, check_documented  # noqa: E402
from servers import ROOT, BrowserTap, Pages, Tabwire  # noqa: E402


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tabwire", default=str(ROOT / "target" / "debug" / "tabwire"))
    parser.add_argument("--venv", default=str(ROOT / "target" / "btap-diff" / "venv"))
    parser.add_argument("--only", help="run the calls whose label contains this")
    parser.add_argument("--report", default=str(ROOT / "target" / "btap-diff" / "report.json"))
    parser.add_argument("--show", action="store_true", help="print both replies of each differing call")
    parser.add_argument("--replay", metavar="REPORT",
                        help="take BrowserTap's replies from an earlier report instead of running it "
                             "(fast, for working on tabwire; CI always runs both)")
    return parser.parse_args()


def schema_row(tool):
    props = (tool.inputSchema or {}).get("properties", {})
    required = set((tool.inputSchema or {}).get("required", []))
    params = {}
    for name, spec in props.items():
        params[name] = {"required": name in required, "default": spec.get("default")}
    hints = tool.annotations.model_dump(exclude_none=True) if tool.annotations else {}
    hints.pop("title", None)
    return params, hints


async def compare_lists(btap, tabwire):
    """tools/list, resources/list, prompts/list: what a client sees before a call."""
    out = []
    theirs = {t.name: t for t in (await btap.session.list_tools()).tools}
    ours = {t.name: t for t in (await tabwire.session.list_tools()).tools}
    diffs = []
    for name, tool in theirs.items():
        if name not in ours:
            diffs.append((name, "missing", "tool"))
            continue
        p1, h1 = schema_row(tool)
        p2, h2 = schema_row(ours[name])
        for param, spec in p1.items():
            if param not in p2:
                diffs.append((f"{name}.{param}", "missing", "parameter"))
            elif spec != p2[param]:
                diffs.append((f"{name}.{param}", "value", f"{spec} there, {p2[param]} here"))
        for hint, value in h1.items():
            if h2.get(hint) != value:
                diffs.append((f"{name}.annotations.{hint}", "value", f"{value} there, {h2.get(hint)} here"))
    out.append(("tools/list", diffs))
    for method in ("list_resources", "list_prompts"):
        diffs = []
        try:
            r1 = await getattr(btap.session, method)()
        except Exception as error:  # noqa: BLE001
            r1 = error
        try:
            r2 = await getattr(tabwire.session, method)()
        except Exception as error:  # noqa: BLE001
            r2 = error
        if isinstance(r2, Exception) and not isinstance(r1, Exception):
            diffs.append((method, "outcome", f"answers there, {r2} here"))
        elif method == "list_resources" and not isinstance(r1, Exception):
            ours_uris = {str(r.uri) for r in r2.resources}
            for resource in r1.resources:
                if str(resource.uri) not in ours_uris:
                    diffs.append((str(resource.uri), "missing", "resource"))
                else:
                    text = await tabwire.session.read_resource(resource.uri)
                    if not text.contents or not getattr(text.contents[0], "text", ""):
                        diffs.append((str(resource.uri), "value", "empty here"))
        out.append((method.replace("list_", "") + "/list", diffs))
    return out


class Replayed:
    """BrowserTap's side of an earlier run, answered by label."""

    name = "browsertap"

    def __init__(self, report):
        self.rows = {r["label"]: r for r in json.loads(Path(report).read_text())}
        self.lists = {r["label"]: r for r in self.rows.values() if "browsertap" not in r}

    async def call(self, tool, arguments, label):
        row = self.rows.get(label) or {}
        return row.get("browsertap", {"__exception__": "not in the replayed report"}), None


async def run_steps(args, btap, tabwire, pages, files):
    contexts = {"browsertap": Context(pages, files), "tabwire": Context(pages, files)}
    results = []
    for step in plan():
        # --only compares the chosen calls; every step still runs, in order, for what
        # later calls depend on (the tab the suite opened, a page it navigated to).
        chosen = not args.only or args.only in step.label

        async def one(server):
            ctx = contexts[server.name]
            arguments = step.arguments(ctx)
            started = time.monotonic()
            try:
                if isinstance(server, Replayed):
                    envelope, _ = await server.call(step.tool, arguments, step.label)
                else:
                    envelope, _ = await server.call(step.tool, arguments)
            except Exception as error:  # noqa: BLE001
                envelope = {"__exception__": repr(error)}
            took = time.monotonic() - started
            if step.keep:
                try:
                    step.keep(ctx, envelope)
                except Exception:  # noqa: BLE001
                    pass
            return arguments, envelope, took

        (a_args, theirs, a_took), (b_args, ours, b_took) = await asyncio.gather(one(btap), one(tabwire))
        row = {"label": step.label, "tool": step.tool, "checked": step.check and chosen,
               "args": {"browsertap": a_args, "tabwire": b_args},
               "browsertap": theirs, "tabwire": ours,
               "seconds": {"browsertap": round(a_took, 2), "tabwire": round(b_took, 2)}}
        if row["checked"]:
            row["diffs"] = [list(d) for d in compare(theirs, ours, step.tool)]
        results.append(row)
    return results


def judge(rows):
    """Each difference is allowed by a divergence, or it is a failure."""
    failures = 0
    for row in rows:
        if row["label"] in ("tools/list", "resources/list", "prompts/list") or row["checked"]:
            listed, open_ = [], []
            for path, kind, detail in row.get("diffs", []):
                entry = allowed(row["tool"], row["label"], generic(path), kind)
                (listed if entry else open_).append([path, kind, detail, entry])
            row["listed"] = listed
            row["open"] = open_
            failures += bool(open_)
    return failures


def summary(rows, took):
    calls = [r for r in rows if r.get("checked")]
    matching = sum(1 for r in calls if not r["diffs"])
    divergent = sum(1 for r in calls if r["diffs"] and not r["open"])
    failing = sum(1 for r in calls if r["open"])
    reasons = {}
    for r in rows:
        for *_, entry in r.get("listed", []):
            reasons.setdefault(DIVERGENCES[entry]["reason"], set()).add(entry)
    by_reason = ", ".join(f"{k}: {len(v)}" for k, v in sorted(reasons.items())) or "none"
    return (f"btap-diff: {len(calls)} calls compared: {matching} match, {divergent} differ only as listed, "
            f"{failing} differ unlisted; divergences used by reason {by_reason}; {took:.0f} s")


def print_open(rows, show):
    for row in rows:
        if not row.get("open"):
            continue
        print(f"\n✗ {row['label']}  ({row['tool']})")
        for path, kind, detail, _ in row["open"][:40]:
            print(f"    {kind:8} {path}: {detail}")
        if len(row["open"]) > 40:
            print(f"    … {len(row['open']) - 40} more")
        if show and "browsertap" in row:
            print("    there:", json.dumps(row["browsertap"])[:3000])
            print("    here: ", json.dumps(row["tabwire"])[:3000])


async def main():
    args = parse()
    check_documented(ROOT / "docs" / "btap-divergences.md")
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="btap-diff-"))
    files = work / "files"
    files.mkdir()
    (files / "upload.txt").write_text("uploaded by the diff suite\n")
    os.environ["BTAP_DIFF_FILES"] = str(files)
    pages = Pages()
    (work / "browsertap").mkdir()
    (work / "tabwire").mkdir()
    tabwire = Tabwire(args.tabwire, work / "tabwire")
    if args.replay:
        btap = Replayed(args.replay)
        try:
            await tabwire.start()
            rows = await run_steps(args, btap, tabwire, pages, str(files))
        finally:
            await tabwire.stop()
            pages.close()
    else:
        # BrowserTap's bridge and extension use fixed ports: one live run at a time.
        lock = open(tempfile.gettempdir() + "/btap-diff.lock", "w")
        fcntl.flock(lock, fcntl.LOCK_EX)
        btap = BrowserTap(args.venv, work / "browsertap")
        try:
            await btap.launch()
            await btap.open(btap.tool("browsertap"), [], btap.env)
            await tabwire.start()
            rows = [{"label": label, "tool": label, "checked": True, "diffs": [list(d) for d in diffs]}
                    for label, diffs in await compare_lists(btap, tabwire)]
            rows += await run_steps(args, btap, tabwire, pages, str(files))
        finally:
            # Last opened, first closed: each MCP client's task group is a cancel scope
            # of this task, and closing them out of order cancels the task.
            await tabwire.stop()
            await btap.stop()
            pages.close()
            lock.close()
    failures = judge(rows)
    Path(args.report).parent.mkdir(parents=True, exist_ok=True)
    Path(args.report).write_text(json.dumps(rows, indent=1, default=str))
    print_open(rows, args.show)
    print(summary(rows, time.monotonic() - started))
    print(f"btap-diff: report in {args.report}; servers' logs in {work}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
