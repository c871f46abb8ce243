#!/usr/bin/env bash
# Prometheus metrics end to end (docs/metrics.md), with Debian's prometheus and
# prometheus-node-exporter: in a network namespace the test creates (its loopback only), a
# journald of its own (a private mount namespace with a tmpfs on /run, as the journal sandbox
# does), the simulator, the daemon, `rdma-eventctl metrics --textfile` writing into a temporary
# directory, node_exporter reading it with its textfile collector only, and prometheus scraping
# node_exporter every second with the shipped rules (config/prometheus/rdma-eventd.rules.yml,
# as they are). Asserts:
#  - `rdma-eventctl metrics` prints what `promtool check metrics` accepts, and the textfile
#    holds every port's state;
#  - `rdma-sim port down mlx5_0/1` makes RDMAPortDown fire in prometheus' /api/v1/alerts for
#    device mlx5_0, port 1, and for no other port; `port up` resolves it;
#  - a storm of 2000 events leads to at most 200 rewrites of the file (coalesced), and the
#    file ends up counting every record;
#  - the daemon stopped: the textfile says rdma_eventd_up 0; started again: the follower
#    reconnects, and the counters the daemon keeps start from the new daemon's;
#  - the textfile directory (a small tmpfs) full: the next rewrite fails, the file is removed
#    (prometheus no longer has rdma_eventd_up), the failure is logged once and the follower goes
#    on; space again: the file is back, current, without a restart.
# Needs root (namespaces) and prometheus, prometheus-node-exporter, curl, jq
# (scripts/bootstrap.sh deps). Run by ctest.
set -euo pipefail
: "${BUILD_DIR:?run it through ctest}"
# shellcheck source-path=SCRIPTDIR source=test_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"

build_under_test
rules=$SOURCE_DIR/config/prometheus/rdma-eventd.rules.yml
node_port=19100
prom_port=19090

require_root_and_tools "metrics alert test" namespaces \
  prometheus promtool prometheus-node-exporter curl jq

scratch=$(mktemp -d /tmp/rdma-metrics-XXXXXX)
ns=rdma-metrics-$$
anchor_pid=
daemon_pid=
follower_pid=
node_pid=
prom_pid=

diagnostics() {
  for log in daemon follower node_exporter prometheus; do
    echo "--- $log log"
    tail -n 20 "$scratch/$log.log" 2>/dev/null || true
  done
  echo "--- textfile"
  cat "$scratch/textfile/rdma_eventd.prom" 2>/dev/null || true
  echo "--- prometheus alerts"
  alerts 2>/dev/null || true
}

cleanup() {
  set +e
  stop_pid "$prom_pid"
  stop_pid "$node_pid"
  stop_pid "$follower_pid"
  stop_pid "$daemon_pid"
  "$bin/rdma-sim" --dir "$scratch/sim" stop >/dev/null 2>&1
  stop_pid "$anchor_pid"
  ip netns del "$ns" 2>/dev/null
  umount "$scratch/textfile" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT

# in_ns COMMAND...: in the test's network and mount namespaces (the journald's). Processes
# started in the background call nsenter themselves, so that $! is theirs (nsenter and the
# simulator's run execute them in its place).
in_ns() { nsenter -t "$anchor_pid" -m -n "$@"; }
ctl() { "$eventctl" --socket "$scratch/events.sock" "$@"; }
sim() { "$bin/rdma-sim" --dir "$scratch/sim" "$@"; }
# Prometheus' active alerts (pending and firing), as its API returns them.
alerts() { in_ns curl -sf "http://127.0.0.1:$prom_port/api/v1/alerts"; }
# The labels of the firing RDMAPortDown alerts, one compact JSON object each, sorted.
port_down_firing() {
  alerts | jq -c '.data.alerts[] | select(.labels.alertname == "RDMAPortDown" and .state == "firing")
                  | {device: .labels.device, port: .labels.port}' | sort
}
# An instant query's first value ("" when none).
query() {
  in_ns curl -sf "http://127.0.0.1:$prom_port/api/v1/query" --data-urlencode "query=$1" |
    jq -r '.data.result[0].value[1] // ""'
}
up_is() { [ "$(query rdma_eventd_up)" = "$1" ]; }
# Prometheus answers that it has no rdma_eventd_up (an empty answer could be no answer at all).
up_absent() { [ "$(query 'absent(rdma_eventd_up)')" = 1 ]; }
textfile_has() { grep -qxF "$1" "$scratch/textfile/rdma_eventd.prom"; }

# The textfile directory is a file system of its own, small enough to fill (below), mounted
# before the namespaces are made so that the follower and node_exporter in them see it too.
mkdir -p "$scratch/textfile"
mount -t tmpfs -o size=256k,mode=755 rdma-metrics-textfile "$scratch/textfile"

step "network namespace $ns (loopback only) with a journald of its own"
ip netns add "$ns"
ip -n "$ns" link set lo up
cat >"$scratch/journald.conf" <<'EOF'
[Journal]
Storage=volatile
ReadKMsg=no
ForwardToSyslog=no
ForwardToWall=no
EOF
nsenter --net="/run/netns/$ns" unshare --mount --propagation private bash -c '
  set -e
  mount -t tmpfs -o mode=755 tmpfs /run
  mount --bind "$1/journald.conf" /etc/systemd/journald.conf
  exec /lib/systemd/systemd-journald' anchor "$scratch" >"$scratch/journald.log" 2>&1 &
anchor_pid=$!
wait_for 20 "journald" test -S "/proc/$anchor_pid/root/run/systemd/journal/socket"

step "simulator and daemon"
sim start -t "$topology" >/dev/null
mkdir -p "$scratch/state" "$scratch/textfile"
start_daemon() {
  nsenter -t "$anchor_pid" -m -n env STATE_DIRECTORY="$scratch/state" "$bin/rdma-sim" --dir "$scratch/sim" run -- \
    "$bin/rdma-eventd" -f --socket "$scratch/events.sock" >>"$scratch/daemon.log" 2>&1 &
  daemon_pid=$!
  wait_for 30 "daemon answering" ctl status --json
}
start_daemon

step "rdma-eventctl metrics: promtool check metrics accepts it"
ctl metrics >"$scratch/once.prom" || fail "rdma-eventctl metrics exited $?"
promtool check metrics <"$scratch/once.prom" || fail "promtool check metrics: $(cat "$scratch/once.prom")"
for line in 'rdma_eventd_up 1' 'rdma_eventd_devices 2' \
  'rdma_eventd_port_state_id{device="mlx5_0",port="1"} 4' \
  'rdma_eventd_port_lid{device="mlx5_0",port="1"} 7' \
  'rdma_eventd_port_rate_bytes_per_second{device="mlx5_0",port="1"} 25000000000' \
  'rdma_eventd_port_state_id{device="mlx5_1",port="2"} 4' \
  'rdma_eventd_port_down_transitions_total{device="mlx5_0",port="1"} 0'; do
  grep -qxF "$line" "$scratch/once.prom" || fail "rdma-eventctl metrics lacks '$line'"
done

step "the follower, node_exporter (textfile only) and prometheus (the shipped rules)"
nsenter -t "$anchor_pid" -m -n "$eventctl" --socket "$scratch/events.sock" metrics --textfile "$scratch/textfile" \
  >"$scratch/follower.log" 2>&1 &
follower_pid=$!
wait_for 20 "textfile" test -s "$scratch/textfile/rdma_eventd.prom"
textfile_has 'rdma_eventd_up 1' || fail "textfile without rdma_eventd_up 1"
nsenter -t "$anchor_pid" -m -n prometheus-node-exporter --web.listen-address="127.0.0.1:$node_port" \
  --collector.disable-defaults --collector.textfile \
  --collector.textfile.directory="$scratch/textfile" >"$scratch/node_exporter.log" 2>&1 &
node_pid=$!
cat >"$scratch/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $rules
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$node_port']
EOF
promtool check config "$scratch/prometheus.yml" >/dev/null || fail "promtool check config"
nsenter -t "$anchor_pid" -m -n prometheus --config.file="$scratch/prometheus.yml" --storage.tsdb.path="$scratch/tsdb" \
  --web.listen-address="127.0.0.1:$prom_port" >"$scratch/prometheus.log" 2>&1 &
prom_pid=$!
wait_for 60 "prometheus scraping rdma_eventd_up 1" up_is 1
[ -z "$(port_down_firing)" ] || fail "RDMAPortDown firing before any port went down"

step "port down mlx5_0/1: RDMAPortDown fires for it, and only it"
sim port down mlx5_0/1 >/dev/null
wait_for 10 "textfile with mlx5_0/1 down" \
  textfile_has 'rdma_eventd_port_state_id{device="mlx5_0",port="1"} 1'
textfile_has 'rdma_eventd_port_down_transitions_total{device="mlx5_0",port="1"} 1' ||
  fail "no down transition counted for mlx5_0/1"
deadline=$((SECONDS + 60))
until [ "$(port_down_firing)" = '{"device":"mlx5_0","port":"1"}' ]; do
  ((SECONDS < deadline)) || fail "RDMAPortDown not firing for mlx5_0/1 alone after 60s; firing: $(port_down_firing | tr '\n' ' ')"
  sleep 0.5
done

step "port up mlx5_0/1: RDMAPortDown resolves"
sim port up mlx5_0/1 >/dev/null
deadline=$((SECONDS + 30))
until [ -z "$(alerts | jq -c '.data.alerts[] | select(.labels.alertname == "RDMAPortDown")')" ]; do
  ((SECONDS < deadline)) || fail "RDMAPortDown still active 30s after port up: $(alerts)"
  sleep 0.5
done
textfile_has 'rdma_eventd_port_state_id{device="mlx5_0",port="1"} 4' || fail "mlx5_0/1 not active in the textfile"
textfile_has 'rdma_eventd_port_events_total{device="mlx5_0",port="1",event="port_err"} 1' ||
  fail "the textfile does not count mlx5_0/1's port_err"

step "a storm of 2000 events: the follower rewrites the file far fewer times"
# Each rewrite is two requests (status, health); the daemon counts the follower's requests.
follower_requests() {
  ctl status --json | jq -r --argjson pid "$follower_pid" \
    '.subscribers.list[] | select(.pid == $pid) | .requests'
}
requests_before=$(follower_requests)
records_before=$(ctl status --json | jq -r .counters.records)
sim storm --count 2000 --targets mlx5_0/1 --types sm_change >/dev/null
records_reach() { [ "$(ctl status --json | jq -r .counters.records)" -ge "$1" ]; }
wait_for 30 "the daemon publishing the storm's 2000 records" records_reach $((records_before + 2000))
records_after=$(ctl status --json | jq -r .counters.records)
# The file is up to date once it counts the last record (the daemon's own status requests
# publish nothing).
wait_for 30 "textfile counting all $records_after records" \
  textfile_has "rdma_eventd_records_published_total $records_after"
rewrites=$((($(follower_requests) - requests_before) / 2))
echo "storm: $((records_after - records_before)) records, $rewrites rewrites"
[ "$rewrites" -ge 1 ] && [ "$rewrites" -le 200 ] ||
  fail "$rewrites rewrites for $((records_after - records_before)) records: not coalesced"

step "the daemon stopped: rdma_eventd_up 0; started again: the follower reconnects"
stop_pid "$daemon_pid"
wait_for 10 "textfile with rdma_eventd_up 0" textfile_has 'rdma_eventd_up 0'
wait_for 10 "prometheus seeing rdma_eventd_up 0" up_is 0
rc=0
ctl metrics >"$scratch/down.prom" 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "rdma-eventctl metrics without a daemon exited $rc, not 2"
grep -qxF 'rdma_eventd_up 0' "$scratch/down.prom" || fail "rdma-eventctl metrics without a daemon: $(cat "$scratch/down.prom")"
start_daemon
wait_for 30 "textfile with rdma_eventd_up 1 again" textfile_has 'rdma_eventd_up 1'
textfile_has 'rdma_eventd_port_down_transitions_total{device="mlx5_0",port="1"} 0' ||
  fail "the new daemon's counters are not in the textfile"

step "the textfile's file system full: the file goes, the follower goes on; space again: it is back"
no_space="$scratch/textfile/rdma_eventd.prom: No space left on device; the file is removed until it can be written; retrying"
# A second link holds the file's blocks, so that removing it frees none: here the next rewrite
# would otherwise fit exactly in what the removal frees, and succeed at once.
ln "$scratch/textfile/rdma_eventd.prom" "$scratch/textfile/held"
dd if=/dev/zero of="$scratch/textfile/filler" bs=4k 2>/dev/null || true
requests_full=$(follower_requests)
sim port down mlx5_1/1 >/dev/null
wait_for 10 "textfile removed" test ! -e "$scratch/textfile/rdma_eventd.prom"
leftovers=$(ls -A "$scratch/textfile" | paste -sd' ')
[ "$leftovers" = "filler held" ] || fail "the failed rewrite left files behind: $leftovers"
wait_for 10 "prometheus without rdma_eventd_up" up_absent
sim port up mlx5_1/1 >/dev/null
# A second failure of the same kind (the port up's rewrite) is not logged again.
# (each rewrite is two requests)
requests_reach() { [ "$(follower_requests)" -ge "$1" ]; }
wait_for 20 "two failed rewrites" requests_reach $((requests_full + 4))
kill -0 "$follower_pid" 2>/dev/null || fail "the follower exited on a full file system"
[ "$(grep -cxF "rdma-eventctl: $no_space" "$scratch/follower.log")" = 1 ] ||
  fail "the full file system not logged once as '$no_space': $(cat "$scratch/follower.log")"
rm "$scratch/textfile/filler" "$scratch/textfile/held"
wait_for 20 "textfile back with mlx5_1/1 active" \
  textfile_has 'rdma_eventd_port_state_id{device="mlx5_1",port="1"} 4'
textfile_has 'rdma_eventd_up 1' || fail "textfile back without rdma_eventd_up 1"
grep -qxF "rdma-eventctl: $scratch/textfile/rdma_eventd.prom is up to date again" "$scratch/follower.log" ||
  fail "the recovery not logged: $(cat "$scratch/follower.log")"
wait_for 10 "prometheus seeing rdma_eventd_up 1 again" up_is 1

step "SIGTERM: the follower removes the textfile"
stop_pid "$follower_pid"
[ ! -e "$scratch/textfile/rdma_eventd.prom" ] || fail "textfile left after the follower stopped"
echo "PASS"
