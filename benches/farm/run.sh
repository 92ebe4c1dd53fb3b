#!/usr/bin/env bash
# The farm bench: many agents, several `tabwire --http` servers behind HAProxy, one
# Browserless farm whose concurrency limit is below the number of agents.
#
#   benches/farm/run.sh [--agents N] [--calls N] [--concurrent N] [--queued N]
#                       [--servers N] [--faults | --faults-only]
#
# Phase 1 proves that N agents (default 32) each making C calls (default 50) of
# open_url, scan_page, page_type, page_click get every reply, none misrouted, none showing
# another agent's cookie, and that waiting for a farm browser is queueing, not failure;
# with latency percentiles. Phase 2 (--faults) runs again and, a third of the way
# through, kills -9 one tabwire server and one farm browser, and reports what each agent
# saw (HTTP 404 and a new session, no reply, error codes) and whether it finished.
# The report is printed and written to target/farm-bench.md.
#
# What it starts, and stops on exit: a page server (python3 http.server), the tabwire
# servers, HAProxy (installed with apt-get if missing), and the farm unless one already
# answers on its port (then it is used as it is, and left running).
#
# Environment (flags win):
#   TABWIRE          the binary (default target/release/tabwire)
#   TABWIRE_FLAGS    the servers' flags instead of the default, which is
#                    --browser-per-session --cdp-endpoint FARM_WS --no-broker when the
#                    binary has --browser-per-session, else --cdp-endpoint FARM_WS
#                    --no-broker (one shared farm browser per server: cookies are then
#                    shared by the agents on a server, and isolation is not tested).
#                    @FARM_WS@ in it stands for the farm's endpoint, e.g.
#                    TABWIRE_FLAGS="--isolate-sessions --cdp-endpoint @FARM_WS@ --no-broker",
#                    or with no farm at all TABWIRE_FLAGS="--headless --isolated"
#   BROWSERLESS_UP   the farm's start script (default /work/shared/tools/browserless-up.sh)
#   FARM_PORT FARM_TOKEN FARM_DIR   the farm (3000, farm, /tmp/tabwire-farm)
#   FARM_WS          the endpoint given to tabwire (default ws://127.0.0.1:FARM_PORT/chromium?token=FARM_TOKEN)
#   TIMEOUT          the farm's session timeout in ms when this script starts it (default 0: none)
#   AGENTS CALLS FARM_CONCURRENT FARM_QUEUED SERVERS   as the flags
#   FRONT_PORT       HAProxy's port (8930); the servers take the next ports, the page
#                    server PAGE_PORT (8950), HAProxy's stats STATS_PORT (8949)
#   HEALTH           auto (default: http if GET /health answers 200, else tcp), http, tcp, none
#   TOOL_TIMEOUT     the tools' timeout argument in seconds (default: the tools' own)
#   BUSY_DEADLINE    seconds an agent keeps retrying a call while no farm browser is free
#                    (browser_busy, or a queued call's timeout) before it gives up (600)
#   WORK             logs and generated files (default $TMPDIR/tabwire-farm-bench)
#   OUT              the markdown report (default target/farm-bench.md)
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
here=$repo/benches/farm

agents=${AGENTS:-32}
calls=${CALLS:-50}
concurrent=${FARM_CONCURRENT:-8}
queued=${FARM_QUEUED:-40}
servers=${SERVERS:-2}
phase1=1 phase2=0

usage() { sed -n '5,6s/^#   //p' "$0"; }
die() { echo "farm bench: $*" >&2; exit 1; }
number() { [[ "${2:-}" =~ ^[0-9]+$ ]] || die "$1 needs a whole number, got '${2:-}'"; }

while [ "$#" -gt 0 ]; do
  case "$1" in
    --agents) number "$1" "${2:-}"; agents=$2; shift 2 ;;
    --calls) number "$1" "${2:-}"; calls=$2; shift 2 ;;
    --concurrent) number "$1" "${2:-}"; concurrent=$2; shift 2 ;;
    --queued) number "$1" "${2:-}"; queued=$2; shift 2 ;;
    --servers) number "$1" "${2:-}"; servers=$2; shift 2 ;;
    --faults) phase2=1; shift ;;
    --faults-only) phase1=0 phase2=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
  esac
done
[ "$servers" -ge 1 ] || die "--servers must be at least 1"
[ "$phase2" = 0 ] || [ "$servers" -ge 2 ] || die "--faults needs at least 2 servers (one is killed)"

tabwire=${TABWIRE:-target/release/tabwire}
browserless_up=${BROWSERLESS_UP:-/work/shared/tools/browserless-up.sh}
farm_port=${FARM_PORT:-3000}
farm_token=${FARM_TOKEN:-farm}
farm_dir=$(realpath -m -- "${FARM_DIR:-/tmp/tabwire-farm}")
farm_ws=${FARM_WS:-ws://127.0.0.1:$farm_port/chromium?token=$farm_token}
front_port=${FRONT_PORT:-8930}
page_port=${PAGE_PORT:-8950}
stats_port=${STATS_PORT:-8949}
health=${HEALTH:-auto}
work=$(realpath -m -- "${WORK:-${TMPDIR:-/tmp}/tabwire-farm-bench}")
out=${OUT:-target/farm-bench.md}

# --- what must be there ------------------------------------------------------------

[ -x "$tabwire" ] || die "no tabwire binary at $tabwire: build it with
  cargo build --release -p tabwire
or point TABWIRE at one"
command -v python3 >/dev/null || die "python3 is missing (apt-get install -y python3)"
command -v curl >/dev/null || die "curl is missing (apt-get install -y curl)"
if ! command -v haproxy >/dev/null; then
  [ "$(id -u)" = 0 ] || die "haproxy is missing: apt-get install -y haproxy (as root)"
  echo "farm bench: installing Debian's haproxy" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y haproxy >&2 ||
    { apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y haproxy >&2; } ||
    die "apt-get install haproxy failed"
fi

help=$("$tabwire" --help 2>/dev/null || true)
# With --cdp-endpoint, tabwire shares the link through a broker keyed by the endpoint, so a
# second server on the same farm URL refuses to start ("another tabwire already serves this
# browser"); each server keeps its own link instead.
no_broker=()
[[ "$help" == *"--no-broker"* ]] && no_broker=(--no-broker)
if [ -n "${TABWIRE_FLAGS:-}" ]; then
  read -r -a flags <<<"${TABWIRE_FLAGS//@FARM_WS@/$farm_ws}"
  mode="custom: ${flags[*]}"
elif [[ "$help" == *"--browser-per-session"* ]]; then
  flags=(--browser-per-session --cdp-endpoint "$farm_ws" "${no_broker[@]}")
  mode="one farm browser per MCP session (--browser-per-session)"
else
  flags=(--cdp-endpoint "$farm_ws" "${no_broker[@]}")
  mode="one shared farm browser per server (this tabwire has no --browser-per-session)"
  echo "farm bench: $tabwire has no --browser-per-session; each server shares one farm browser" >&2
  echo "farm bench: among its sessions, so cookies are shared and isolation is not tested" >&2
fi
isolation=0
[[ " ${flags[*]} " == *" --browser-per-session "* || " ${flags[*]} " == *" --isolate-sessions "* ]] && isolation=1
uses_farm=0
[[ " ${flags[*]} " == *"$farm_ws"* || " ${flags[*]} " == *"127.0.0.1:$farm_port"* ]] && uses_farm=1

# --- cleanup -------------------------------------------------------------------------

started_pids=() # everything this script started, stopped by pid on exit
farm_started=0
alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
stop_pid() {
  local pid=$1 i
  alive "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 50); do alive "$pid" || break; sleep 0.1; done
  alive "$pid" && kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
cleanup() {
  local pid
  trap '' PIPE # a reader of our output that is gone must not stop the cleanup
  for pid in "${started_pids[@]}"; do stop_pid "$pid"; done
  if [ "$farm_started" = 1 ]; then "$browserless_up" --stop --dir "$farm_dir" >&2 || true; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

answers() { curl -s -m 2 -o /dev/null "http://127.0.0.1:$1/" 2>/dev/null; }
free_port() { ! answers "$1" || die "something already answers on 127.0.0.1:$1 (set ${2}=another port)"; }

rm -rf "$work"
mkdir -p "$work/site"

# --- the page ------------------------------------------------------------------------
# ?agent=M sets the cookies agent=M and seen_M=1; the page shows the agent, the result of
# the last click and document.cookie, so one text read checks all three.
cat >"$work/site/index.html" <<'HTML'
<!doctype html>
<html><head><meta charset="utf-8"><title>farm bench</title></head>
<body>
<p>agent: <span id="who">none</span></p>
<label>value <input id="in" autocomplete="off"></label>
<button id="go" type="button">go</button>
<p>result: <span id="out"></span></p>
<p>cookies: [<span id="jar"></span>]</p>
<script>
  const agent = new URLSearchParams(location.search).get("agent");
  if (agent) {
    document.cookie = "agent=" + agent + "; path=/";
    document.cookie = "seen_" + agent + "=1; path=/";
    document.getElementById("who").textContent = agent;
  }
  const showJar = () => { document.getElementById("jar").textContent = document.cookie; };
  showJar();
  document.getElementById("go").addEventListener("click", () => {
    document.getElementById("out").textContent = document.getElementById("in").value;
    showJar();
  });
</script>
</body></html>
HTML
free_port "$page_port" PAGE_PORT
python3 -m http.server --bind 127.0.0.1 --directory "$work/site" "$page_port" \
  >"$work/pages.log" 2>&1 &
started_pids+=($!)
deadline=$((SECONDS + 10))
until answers "$page_port"; do
  [ "$SECONDS" -lt "$deadline" ] || die "the page server did not answer on 127.0.0.1:$page_port"
  sleep 0.2
done

# --- the farm ------------------------------------------------------------------------

farm_url() { echo "http://127.0.0.1:$farm_port/$1?token=$farm_token"; }
farm_note=""
if [ "$uses_farm" = 1 ]; then
  if curl -fsS -m 5 -o /dev/null "$(farm_url json/version)" 2>/dev/null; then
    farm_note="a farm already on port $farm_port, used as it is"
  else
    [ -x "$browserless_up" ] || die "no farm answers on 127.0.0.1:$farm_port and there is no start script
at $browserless_up. Start a Browserless farm there (ws://127.0.0.1:$farm_port/chromium?token=$farm_token),
or set BROWSERLESS_UP to a script taking --port --token --concurrent --queued --dir (and --stop --dir)."
    TIMEOUT=${TIMEOUT:-0} "$browserless_up" --port "$farm_port" --token "$farm_token" \
      --concurrent "$concurrent" --queued "$queued" --dir "$farm_dir" >&2
    farm_started=1
    farm_note="started by the bench"
  fi
  config=$(curl -fsS -m 5 "$(farm_url config)" 2>/dev/null || echo '{}')
  read -r concurrent queued farm_timeout < <(python3 -c '
import json, sys
c = json.loads(sys.argv[1])
print(c.get("concurrent", sys.argv[2]), c.get("queued", sys.argv[3]), c.get("timeout", "?"))
' "$config" "$concurrent" "$queued")
  farm_note="$farm_note; concurrent $concurrent, queued $queued, session timeout ${farm_timeout} ms"
  if [ "$concurrent" -ge "$agents" ]; then
    echo "farm bench: note: the farm's limit ($concurrent) is not below the agents ($agents); nothing will queue" >&2
  fi
else
  concurrent="n/a"
  farm_note="not used by these flags"
fi

# --- servers and HAProxy ---------------------------------------------------------------

server_pids=()
server_ports=()
haproxy_pid=""

start_servers() { # phase
  local i port pid deadline
  server_pids=() server_ports=()
  for i in $(seq 1 "$servers"); do
    port=$((front_port + i))
    free_port "$port" FRONT_PORT
    mkdir -p "$work/out-s$i"
    "$tabwire" --http "127.0.0.1:$port" "${flags[@]}" --output-dir "$work/out-s$i" \
      >"$work/tabwire-s$i-$1.log" 2>&1 &
    pid=$!
    disown "$pid" # its death by the fault is expected: no job notice
    started_pids+=("$pid")
    server_pids+=("$pid")
    server_ports+=("$port")
  done
  for i in $(seq 1 "$servers"); do
    deadline=$((SECONDS + 30))
    until grep -q "listening on" "$work/tabwire-s$i-$1.log" 2>/dev/null; do
      alive "${server_pids[$((i - 1))]}" || { tail -n 20 "$work/tabwire-s$i-$1.log" >&2; die "tabwire s$i exited at start"; }
      [ "$SECONDS" -lt "$deadline" ] || die "tabwire s$i did not listen within 30 s"
      sleep 0.2
    done
  done
}

health_mode() {
  local code
  [ "$health" = auto ] || { echo "$health"; return; }
  code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:${server_ports[0]}/health" || true)
  if [ "$code" = 200 ]; then echo http; else echo "tcp"; fi
}

start_haproxy() { # phase
  local i lines="" check cfg=$work/haproxy-$1.cfg text
  hmode=$(health_mode)
  case "$hmode" in
    http) check="    option httpchk
    http-check send meth GET uri /health ver HTTP/1.1 hdr Host 127.0.0.1
    http-check expect status 200"
          server_check=" check inter 1s fall 2 rise 2" ;;
    tcp) check="    # tcp: GET /health did not answer 200, so a connect is the check"
         server_check=" check inter 1s fall 2 rise 2" ;;
    none) check="    # none: no health check"; server_check="" ;;
    *) die "HEALTH must be auto, http, tcp or none" ;;
  esac
  for i in $(seq 1 "$servers"); do
    lines+="    server s$i 127.0.0.1:${server_ports[$((i - 1))]}$server_check"$'\n'
  done
  text=$(<"$here/haproxy.cfg.in")
  text=${text//@FRONT_PORT@/$front_port}
  text=${text//@STATS_PORT@/$stats_port}
  text=${text//@HEALTH@/$check}
  text=${text//@SERVERS@/${lines%$'\n'}}
  printf '%s\n' "$text" >"$cfg"
  haproxy -c -q -f "$cfg" || die "haproxy rejects $cfg"
  free_port "$front_port" FRONT_PORT
  free_port "$stats_port" STATS_PORT
  haproxy -db -f "$cfg" >"$work/haproxy-$1.log" 2>&1 &
  haproxy_pid=$!
  started_pids+=("$haproxy_pid")
  local deadline=$((SECONDS + 10))
  until curl -s -m 2 -o /dev/null "http://127.0.0.1:$stats_port/stats"; do
    alive "$haproxy_pid" || { cat "$work/haproxy-$1.log" >&2; die "haproxy exited at start"; }
    [ "$SECONDS" -lt "$deadline" ] || die "haproxy did not answer within 10 s"
    sleep 0.2
  done
  # Let the first health checks pass before the agents come.
  sleep 2.5
}

stop_stack() {
  local pid
  stop_pid "$haproxy_pid"
  for pid in "${server_pids[@]}"; do stop_pid "$pid"; done
}

# The fault: SIGKILL to server s1, then (a second later, once the farm has closed s1's
# browsers) SIGKILL to one farm browser still running: the main chromium process, found
# in /proc by its argv[0] under the farm's ms-playwright folder, as browserless-up.sh does.
write_fault() {
  cat >"$work/fault.sh" <<EOF
#!/usr/bin/env bash
kill -KILL ${server_pids[0]} 2>/dev/null && echo "killed tabwire s1 (pid ${server_pids[0]}, port ${server_ports[0]}) with SIGKILL;" || echo "tabwire s1 was already gone;"
sleep 1
farm_dir='$farm_dir'
EOF
  cat >>"$work/fault.sh" <<'EOF'
victims=()
for f in /proc/[0-9]*/cmdline; do
  args=()
  while IFS= read -r -d '' a; do args+=("$a"); done 2>/dev/null <"$f" || true
  [ "${#args[@]}" -gt 0 ] || continue
  [[ "${args[0]}" == "$farm_dir/ms-playwright/"* ]] || continue
  [[ " ${args[*]} " == *" --type="* ]] && continue
  p=${f#/proc/}; victims+=("${p%/cmdline}")
done
if [ "${#victims[@]}" = 0 ]; then echo "no farm browser was running to kill"; exit 0; fi
v=${victims[RANDOM % ${#victims[@]}]}
port=$(tr '\0' '\n' <"/proc/$v/cmdline" 2>/dev/null | sed -n 's/^--remote-debugging-port=//p' | head -n1)
kill -KILL "$v" && echo "killed farm browser pid $v (debugging port ${port:-?}; ${#victims[@]} farm browsers were running) with SIGKILL"
EOF
  chmod +x "$work/fault.sh"
}

run_agents() { # phase md [agents.py flags...]
  local phase=$1 md=$2
  shift 2
  local extra=()
  [ "$isolation" = 1 ] && extra+=(--expect-isolation)
  [ -n "${TOOL_TIMEOUT:-}" ] && extra+=(--tool-timeout "$TOOL_TIMEOUT")
  [ -n "${BUSY_DEADLINE:-}" ] && extra+=(--busy-deadline "$BUSY_DEADLINE")
  python3 "$here/agents.py" --url "http://127.0.0.1:$front_port/mcp" \
    --page "http://127.0.0.1:$page_port/index.html" --agents "$agents" --calls "$calls" \
    --servers "$servers" --farm-limit "$concurrent" --mode "$mode" \
    --stats-url "http://127.0.0.1:$stats_port/stats;csv" --md "$md" --trace "$work/calls-$phase.jsonl" \
    --note "Phase $phase. tabwire: $("$tabwire" --version 2>/dev/null || echo "$tabwire"); servers: ${flags[*]}; farm: $farm_note; HAProxy health check: $hmode." \
    "${extra[@]}" "$@"
}

mkdir -p "$(dirname "$out")"
: >"$out"
status=0
if [ "$phase1" = 1 ]; then
  echo "== phase 1: $agents agents x $calls calls, $servers servers, farm limit $concurrent ($mode)" >&2
  start_servers 1
  start_haproxy 1
  run_agents 1 "$work/phase1.md" || status=1
  cat "$work/phase1.md" >>"$out"
  stop_stack
fi
if [ "$phase2" = 1 ]; then
  echo "== phase 2: the same, with one tabwire server and one farm browser killed a third of the way" >&2
  start_servers 2
  start_haproxy 2
  write_fault
  run_agents 2 "$work/phase2.md" --fault-cmd "$work/fault.sh" --fault-at 0.33 || status=1
  { echo; echo; cat "$work/phase2.md"; } >>"$out"
  stop_stack
fi
echo "farm bench: report in $out; logs in $work" >&2
exit "$status"
