#!/usr/bin/env bash
# The Grafana dashboard's queries (config/grafana/rdma-eventd.json, docs/metrics.md) in a real
# Prometheus. In a network namespace the test creates (its loopback only), four scrape targets
# of one job, as four hosts of a fleet:
#   a, b: each a simulator, a daemon (no journal), `rdma-eventctl metrics --textfile` and
#         Debian's prometheus-node-exporter reading that directory (textfile collector only);
#   c:    a node_exporter whose textfile directory stays empty (no follower);
#   d:    a target nobody listens on.
# Prometheus scrapes them every second. Every panel query, taken from the dashboard's JSON as
# Grafana sends it (tests/unit/grafana_dashboard.sh, $job and $instance set to the job and All),
# is asserted as a whole result, each once the state it shows has been driven:
#  - both hosts healthy, c and d in 'Daemons down', no downs, fatal events or records lost;
#  - a subscriber of a stopped (SIGSTOP) while a storm of records goes by loses records; a's
#    mlx5_0/1 goes down; a's mlx5_1 reports a fatal error: 'Hosts by verdict' counts a as fatal
#    (its worst verdict) and b as healthy; 'Ports not healthy' lists a's three ports and no other;
#    'Port downs per hour', 'Fatal events' and 'Records lost per hour' have a series for them;
#  - b's daemon stopped: 'Daemons down' lists b as well.
# The variables' label_values() queries return the job and the four hosts.
# Needs root (network namespaces) and prometheus, prometheus-node-exporter, curl, jq. Run by ctest.
set -euo pipefail
: "${BUILD_DIR:?run it through ctest}"
# shellcheck source-path=SCRIPTDIR source=test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"

build_under_test
dashboard=$SOURCE_DIR/config/grafana/rdma-eventd.json
queries_tool=$SOURCE_DIR/tests/unit/grafana_dashboard.sh
prom_port=19290
declare -A port=([a]=19291 [b]=19292 [c]=19293 [d]=19294)
declare -A instance=([a]=127.0.0.1:19291 [b]=127.0.0.1:19292 [c]=127.0.0.1:19293 [d]=127.0.0.1:19294)

require_root_and_tools "metrics dashboard test" "network namespaces" \
  prometheus promtool prometheus-node-exporter curl jq

scratch=$(mktemp -d /tmp/rdma-dashboard-XXXXXX)
ns=rdma-dashboard-$$
declare -A daemon_pid=() follower_pid=() node_pid=()
prom_pid=
monitor_pid=

diagnostics() {
  local h
  for h in a b; do
    echo "--- host $h: daemon log"
    tail -n 10 "$scratch/$h/daemon.log" 2>/dev/null || true
    echo "--- host $h: textfile"
    grep -v '^#' "$scratch/$h/textfile/rdma_eventd.prom" 2>/dev/null | grep -E '_up |health|lost|fatal' || true
  done
  echo "--- prometheus log"
  tail -n 10 "$scratch/prometheus.log" 2>/dev/null || true
}

cleanup() {
  set +e
  if [ -n "$monitor_pid" ]; then kill -CONT "$monitor_pid" 2>/dev/null; stop_pid "$monitor_pid"; fi
  stop_pid "$prom_pid"
  local h
  for h in a b c; do stop_pid "${node_pid[$h]:-}"; done
  for h in a b; do
    stop_pid "${follower_pid[$h]:-}"
    stop_pid "${daemon_pid[$h]:-}"
    "$bin/rdma-sim" --dir "$scratch/$h/sim" stop >/dev/null 2>&1
  done
  ip netns del "$ns" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT

# "${in_ns[@]}" COMMAND...: in the test's network namespace. nsenter (and env, and the
# simulator's run) execute COMMAND in their place, so that $! of a command started in the
# background is the command's (a shell function would put a shell in between).
in_ns=(nsenter --net="/run/netns/$ns")
sim() { local h=$1; shift; "$bin/rdma-sim" --dir "$scratch/$h/sim" "$@"; }
textfile_value() { sed -n "s/^$2 //p" "$scratch/$1/textfile/rdma_eventd.prom" 2>/dev/null; }

# prom_query EXPR: the result of an instant query, as Prometheus' API returns it.
prom_query() {
  "${in_ns[@]}" curl -sf "http://127.0.0.1:$prom_port/api/v1/query" --data-urlencode "query=$1" | jq -c .data.result
}

# panel TITLE NORMALIZE: every series each query of the panel returns, one line each, sorted:
# "REF {labels but job} VALUE", VALUE passed through the jq filter NORMALIZE (the values that
# depend on timing: rounded, or compared to a bound).
panel() {
  local title=$1 normalize=$2 ref expr
  "$queries_tool" queries "$dashboard" job=node 'instance=.*' |
    jq -r --arg t "$title" 'select(.panel == $t) | [.ref, .expr] | @tsv' |
    while IFS=$'\t' read -r ref expr; do
      expr=$(printf '%b' "$expr") # @tsv escapes the newlines between a query's lines
      prom_query "$expr" | jq -r --arg ref "$ref" \
        ".[] | \"\\(\$ref) \\(.metric | del(.job, .__name__) | to_entries | sort_by(.key) | from_entries | tojson) \\(.value[1] | $normalize)\""
    done | sort
}

# expect_panel TITLE NORMALIZE EXPECTED: waits (30 s at most) until panel TITLE returns
# EXPECTED (its lines, as panel() writes them), or fails showing what it returns.
expect_panel() {
  local title=$1 normalize=$2 expected=$3 actual deadline=$((SECONDS + 30))
  until actual=$(panel "$title" "$normalize") && [ "$actual" = "$expected" ]; do
    ((SECONDS < deadline)) ||
      fail "panel '$title' after 30 s:"$'\n'"$actual"$'\n'"expected:"$'\n'"$expected"
    sleep 0.2
  done
  echo "panel '$title': $(grep -c . <<<"$actual") series as expected"
}

# Lines of expect_panel's EXPECTED: series REF on host H with the labels given (JSON members).
row() {
  local ref=$1 h=$2 labels=$3 value=$4
  printf '%s %s %s\n' "$ref" \
    "$(jq -cS --arg i "${instance[$h]}" "{instance: \$i${labels:+, $labels}}" <<<null)" "$value"
}

step "network namespace $ns (loopback only)"
ip netns add "$ns"
ip -n "$ns" link set lo up
# The smallest queue a subscriber may have (64 KiB): a stopped subscriber loses records within
# the first few hundred of a storm.
cat >"$scratch/daemon.json" <<'EOF'
{"socket": {"max_queued_bytes": 65536}}
EOF
"$bin/rdma-eventd" --check-config -c "$scratch/daemon.json" >/dev/null

step "hosts a and b: simulator, daemon, follower, node_exporter; c: node_exporter alone"
start_node_exporter() {
  local h=$1
  mkdir -p "$scratch/$h/textfile"
  "${in_ns[@]}" prometheus-node-exporter --web.listen-address="127.0.0.1:${port[$h]}" \
    --collector.disable-defaults --collector.textfile \
    --collector.textfile.directory="$scratch/$h/textfile" >"$scratch/$h/node_exporter.log" 2>&1 &
  node_pid[$h]=$!
}
for h in a b; do
  mkdir -p "$scratch/$h/state"
  sim "$h" start -t "$topology" >/dev/null
  "${in_ns[@]}" env STATE_DIRECTORY="$scratch/$h/state" "$bin/rdma-sim" --dir "$scratch/$h/sim" run -- \
    "$bin/rdma-eventd" -f --no-journal -c "$scratch/daemon.json" --socket "$scratch/$h/events.sock" \
    >"$scratch/$h/daemon.log" 2>&1 &
  daemon_pid[$h]=$!
done
for h in a b; do
  wait_for 30 "daemon $h answering" "$eventctl" --socket "$scratch/$h/events.sock" status --json
  start_node_exporter "$h"
  "$eventctl" --socket "$scratch/$h/events.sock" metrics --textfile "$scratch/$h/textfile" \
    >"$scratch/$h/follower.log" 2>&1 &
  follower_pid[$h]=$!
done
start_node_exporter c

step "prometheus scraping the four targets every second"
cat >"$scratch/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['${instance[a]}', '${instance[b]}', '${instance[c]}', '${instance[d]}']
EOF
promtool check config "$scratch/prometheus.yml" >/dev/null || fail "promtool check config"
"${in_ns[@]}" prometheus --config.file="$scratch/prometheus.yml" --storage.tsdb.path="$scratch/tsdb" \
  --web.listen-address="127.0.0.1:$prom_port" >"$scratch/prometheus.log" 2>&1 &
prom_pid=$!

step "the variables: the job, and its four hosts"
variable_values() {
  local metric label
  read -r metric label < <("$queries_tool" variables "$dashboard" |
    jq -r --arg n "$1" 'select(.name == $n) | "\(.metric) \(.label)"')
  prom_query "${metric//\$job/node}" | jq -r --arg l "$label" '[.[].metric[$l]] | unique | join(" ")'
}
variable_is() { [ "$(variable_values "$1")" = "$2" ]; }
wait_for 30 "the job variable: node" variable_is job node
expected_instances=$(printf '%s\n' "${instance[@]}" | sort | paste -sd ' ')
wait_for 30 "the instance variable: $expected_instances" variable_is instance "$expected_instances"

step "all healthy: a and b healthy, c and d down, nothing else"
verdicts() { printf 'A {} %s\nB {} 0\nC {} 0\nD {} 0\nE {} 0\nF {} %s' "$1" "$2"; }
expect_panel 'Hosts by verdict' . "$(verdicts 2 0)"
# Which host is down, and why: the problem label (the value is the series', 0 or 1).
down_rows() {
  local h
  for h in "$@"; do
    case $h in
      b) row A b '"problem": "daemon not answering"' - ;;
      c) row A c '"problem": "no rdma-eventd metrics"' - ;;
      d) row A d '"problem": "node_exporter not scraped"' - ;;
    esac
  done | sort
}
expect_panel 'Daemons down' '"-"' "$(down_rows c d)"
for title in 'Ports not healthy' 'Port downs per hour' 'Fatal events' 'Records lost per hour'; do
  expect_panel "$title" . ""
done

step "a: a subscriber that stops reading loses records of a storm"
"$eventctl" --socket "$scratch/a/events.sock" monitor --json >/dev/null 2>&1 &
monitor_pid=$!
monitor_connected() {
  "$eventctl" --socket "$scratch/a/events.sock" status --json |
    jq -e --argjson pid "$monitor_pid" 'any(.subscribers.list[]; .pid == $pid)'
}
wait_for 10 "the subscriber connected" monitor_connected
kill -STOP "$monitor_pid"
records() { "$eventctl" --socket "$scratch/a/events.sock" status --json | jq -r .counters.records; }
records_reach() { [ "$(records)" -ge "$1" ]; }
records_before=$(records)
sim a storm --count 3000 --targets mlx5_0/1 --types sm_change >/dev/null
wait_for 30 "a's daemon publishing the storm's 3000 records" records_reach $((records_before + 3000))
kill -TERM "$monitor_pid"
kill -CONT "$monitor_pid"
stop_pid "$monitor_pid"
monitor_pid=
# The file is up to date once it counts the last record.
records_after=$(records)
wait_for 30 "a's textfile counting all $records_after records" \
  grep -qxF "rdma_eventd_records_published_total $records_after" "$scratch/a/textfile/rdma_eventd.prom"
lost=$(textfile_value a rdma_eventd_records_lost_total)
[ "$lost" -gt 0 ] || fail "no record lost: $(grep lost "$scratch/a/textfile/rdma_eventd.prom")"
echo "$lost records lost"

step "a: mlx5_0/1 down, mlx5_1 fatal"
sim a port down mlx5_0/1 >/dev/null
sim a fatal mlx5_1 >/dev/null

step "the panels show a's faults, and b healthy"
expect_panel 'Hosts by verdict' . "$(verdicts 1 1)"
# The value: how long the port has had its verdict, a few seconds here.
expect_panel 'Ports not healthy' 'tonumber | . >= 0 and . < 120' "$(
  row A a '"device": "mlx5_0", "port": "1", "health": "down", "reason": "link_down"' true
  row A a '"device": "mlx5_1", "port": "1", "health": "fatal", "reason": "device_fatal"' true
  row A a '"device": "mlx5_1", "port": "2", "health": "fatal", "reason": "device_fatal"' true |
  sort
)"
# increase() extrapolates a little past the samples it has: rounded.
expect_panel 'Port downs per hour' 'tonumber | round' \
  "$(row A a '"device": "mlx5_0", "port": "1"' 1)"
expect_panel 'Fatal events' . "$(row A a '"device": "mlx5_1"' 1)"
expect_panel 'Records lost per hour' "tonumber / $lost | round" "$(row A a '' 1)"
expect_panel 'Daemons down' '"-"' "$(down_rows c d)"

step "b's daemon stopped: 'Daemons down' lists it"
stop_pid "${daemon_pid[b]}"
expect_panel 'Daemons down' '"-"' "$(down_rows b c d)"
echo "PASS"
