#!/usr/bin/env bash
# Runs the official MCP conformance suite (npm package @modelcontextprotocol/conformance)
# against tabwire's Streamable HTTP transport.
#
# The suite is installed with npm into a scratch folder this script owns (never globally)
# and reused on later runs. tabwire is started on a free loopback port with a throw-away
# profile, and stopped when the script exits. Each server scenario of the suite is either
# run or reported as not applicable, with the reason: tabwire serves tools and logging
# only, and many scenarios call fixture tools (test_simple_text, …) that only the suite's
# reference server defines. Exits non-zero if any scenario that was run fails.
#
# Environment:
#   TABWIRE_BIN              the tabwire binary (default target/debug/tabwire, else
#                            target/release/tabwire; relative paths are from the repo root)
#   TABWIRE_CONFORMANCE_DIR  the scratch folder (default $TMPDIR/tabwire-conformance)
set -euo pipefail
cd "$(dirname "$0")/.."

# 0.1.14 and later import fs.globSync, which needs Node 22; 0.1.13 runs on Node 20 too.
suite_version=0.1.13
suite_package=@modelcontextprotocol/conformance

work="${TABWIRE_CONFORMANCE_DIR:-${TMPDIR:-/tmp}/tabwire-conformance}"
mkdir -p "$work"

# The binary under test.
if [ -n "${TABWIRE_BIN:-}" ]; then
  bin="$TABWIRE_BIN"
elif [ -x target/debug/tabwire ]; then
  bin=target/debug/tabwire
else
  bin=target/release/tabwire
fi
if [ ! -x "$bin" ]; then
  echo "No tabwire binary at $bin; build one (cargo build) or set TABWIRE_BIN." >&2
  exit 1
fi

for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "$tool is missing; the conformance suite needs Node.js and npm." >&2
    exit 1
  fi
done

# Install the pinned suite unless the scratch folder already holds exactly that version.
installed_json="$work/node_modules/$suite_package/package.json"
installed=""
if [ -f "$installed_json" ]; then
  installed="$(node -p 'require(process.argv[1]).version' "$installed_json")"
fi
if [ "$installed" != "$suite_version" ]; then
  echo "Installing $suite_package@$suite_version into $work…" >&2
  # A package.json of its own keeps npm from climbing into a parent project.
  [ -f "$work/package.json" ] || echo '{ "private": true }' >"$work/package.json"
  npm install --prefix "$work" --no-audit --no-fund --loglevel=error \
    "$suite_package@$suite_version" >&2
fi
conformance="$work/node_modules/.bin/conformance"

# Fresh output for this run: tabwire's files, its log and the suite's results.
rm -rf "$work/out" "$work/results"
mkdir -p "$work/out" "$work/results"
log="$work/tabwire.log"
: >"$log"

# Start tabwire with stderr on a FIFO, so the script can read the line naming its port.
fifo="$work/tabwire.stderr"
rm -f "$fifo"
mkfifo "$fifo"
tabwire_pid=""
drain_pid=""
cleanup() {
  if [ -n "$tabwire_pid" ] && kill -0 "$tabwire_pid" 2>/dev/null; then
    kill -TERM "$tabwire_pid" 2>/dev/null || true
    # A graceful shutdown takes a few seconds; give it ten, then stop it hard.
    for _ in $(seq 100); do
      kill -0 "$tabwire_pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$tabwire_pid" 2>/dev/null || true
    wait "$tabwire_pid" 2>/dev/null || true
  fi
  if [ -n "$drain_pid" ]; then
    kill "$drain_pid" 2>/dev/null || true
    wait "$drain_pid" 2>/dev/null || true
  fi
  rm -f "$fifo"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$bin" --http 127.0.0.1:0 --isolated --output-dir "$work/out" 2>"$fifo" &
tabwire_pid=$!
exec 3<"$fifo"

# Wait for "tabwire: listening on http://127.0.0.1:PORT/mcp"; anything before it is logged.
url=""
while IFS= read -r -t 60 line <&3; do
  printf '%s\n' "$line" >>"$log"
  case "$line" in
    "tabwire: listening on "*)
      url="${line#tabwire: listening on }"
      break
      ;;
  esac
done
if [ -z "$url" ]; then
  echo "tabwire did not report a listening address; its output ($log):" >&2
  cat "$log" >&2
  exit 1
fi
# Keep reading its stderr into the log, so tabwire never blocks on a full pipe.
cat <&3 >>"$log" &
drain_pid=$!
exec 3<&-
echo "tabwire ($bin) listening on $url" >&2

# Why a scenario does not apply to tabwire; prints nothing when it does apply.
not_applicable() {
  local fixture="calls the suite's fixture tool"
  case "$1" in
    completion-complete) echo "tabwire offers no completions (no completions capability)" ;;
    resources-*) echo "tabwire serves no resources (no resources capability)" ;;
    prompts-*) echo "tabwire serves no prompts (no prompts capability)" ;;
    tools-call-sampling)
      echo "tabwire never sends sampling requests to the client ($fixture test_sampling)" ;;
    tools-call-elicitation)
      echo "tabwire never sends elicitation requests to the client ($fixture test_elicitation)" ;;
    elicitation-sep1034-defaults)
      echo "tabwire never sends elicitation requests to the client ($fixture test_elicitation_sep1034_defaults)" ;;
    elicitation-sep1330-enums)
      echo "tabwire never sends elicitation requests to the client ($fixture test_elicitation_sep1330_enums)" ;;
    tools-call-simple-text) echo "$fixture test_simple_text, which tabwire does not offer" ;;
    tools-call-image) echo "$fixture test_image_content, which tabwire does not offer" ;;
    tools-call-audio) echo "$fixture test_audio_content, which tabwire does not offer" ;;
    tools-call-embedded-resource)
      echo "$fixture test_embedded_resource, which tabwire does not offer (and tabwire serves no resources)" ;;
    tools-call-mixed-content) echo "$fixture test_multiple_content_types, which tabwire does not offer" ;;
    tools-call-with-logging)
      echo "$fixture test_tool_with_logging, which tabwire does not offer (logging itself is checked by logging-set-level)" ;;
    tools-call-error) echo "$fixture test_error_handling, which tabwire does not offer" ;;
    tools-call-with-progress) echo "$fixture test_tool_with_progress, which tabwire does not offer" ;;
    json-schema-2020-12) echo "$fixture json_schema_2020_12_tool, which tabwire does not offer" ;;
  esac
}
# Scenarios not named above are run, so that a newer suite's additions show up as results.
# server-sse-polling is in the suite's pending set; it is run for its transport checks
# (priming event, retry field), and its resume check can only warn, since it calls the
# fixture tool test_reconnection.

scenarios="$("$conformance" list --server | sed -n 's/^  - //p')"
if [ -z "$scenarios" ]; then
  echo "The conformance suite listed no server scenarios." >&2
  exit 1
fi

passed=()
failed=()
skipped=()
for scenario in $scenarios; do
  reason="$(not_applicable "$scenario")"
  if [ -n "$reason" ]; then
    skipped+=("$scenario: $reason")
    continue
  fi
  echo "=== $scenario" >&2
  scenario_log="$work/results/$scenario.log"
  if timeout 180 "$conformance" server --url "$url" --scenario "$scenario" \
       --output-dir "$work/results" >"$scenario_log" 2>&1; then
    status=0
  else
    status=$?
  fi
  # The suite colours its output even into a file; strip that for reading.
  sed -i 's/\x1b\[[0-9;]*m//g' "$scenario_log"
  summary="$(grep -E '^Passed: ' "$scenario_log" | tail -1 || true)"
  if [ "$status" = 0 ]; then
    passed+=("$scenario ($summary)")
    echo "pass: $summary" >&2
  else
    failed+=("$scenario (${summary:-exit status $status})")
    echo "FAIL: ${summary:-exit status $status}; details follow (full log: $scenario_log)" >&2
    # The suite ends its report with each failed check as a blank line, "  - Name:
    # description" and "    Error: message", each followed by the scenario's long
    # description; show just the checks, or the whole log when there are none.
    if grep -q '^=== Failed Checks ===' "$scenario_log"; then
      awk '/^=== Failed Checks ===/ { on = 1 }
           on && prev == "" && /^  - / { print; check = 1; prev = $0; next }
           on && check && /^    Error: / { print }
           { check = 0; prev = $0 }' "$scenario_log" >&2
    else
      cat "$scenario_log" >&2
    fi
  fi
done

echo
echo "MCP conformance suite $suite_package@$suite_version against $url"
echo "Passed (${#passed[@]}):"
for entry in "${passed[@]}"; do echo "  $entry"; done
echo "Failed (${#failed[@]}):"
for entry in "${failed[@]}"; do echo "  $entry"; done
echo "Not applicable (${#skipped[@]}):"
for entry in "${skipped[@]}"; do echo "  $entry"; done
echo "Logs: $work/results (per scenario), tabwire's stderr: $log"

[ "${#failed[@]}" = 0 ]
