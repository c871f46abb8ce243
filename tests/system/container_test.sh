#!/usr/bin/env bash
# rdma-eventd under a real systemd as PID 1. A Debian 12 container is booted with systemd-nspawn
# (its root file system downloaded once a day with debootstrap and cached), the staged install
# (DESTDIR) is copied in, the simulator runs as a unit, and the drop-in of docs/operations.md
# ("Trying it without RDMA hardware") points the service at it. Then:
#   the socket listens before the service runs; a subscriber connecting starts the service; it
#   is ready with its status and a watchdog, unprivileged; an event injected in the simulator
#   reaches the subscriber and `journalctl -u rdma-eventd` with its RDMA_* fields and the
#   catalog text; the report socket is passed too, and a reporter there gets no records; `systemctl reload` applies a changed configuration, and a bad one is logged
#   with priority err (`journalctl -u rdma-eventd -p err`); `systemctl stop` ends it
#   cleanly; a daemon that hangs is killed by the watchdog and started again.
# Needs root. Run by ctest (environment in CMakeLists.txt). Every wait is bounded. The container
# machinery, and the cache of root file systems, are container_lib.sh's.
set -euo pipefail
: "${BUILD_DIR:?run it through ctest}"

# shellcheck source-path=SCRIPTDIR source=container_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/container_lib.sh"

config=$SYSCONF_DIR/rdma-eventd/rdma-eventd.json
sock=/run/rdma-eventd/events.sock
client_pid=

diagnostics() { service_diagnostics; }

client_has() { grep -q "$1" "$scratch/client.out"; }
# In a pipe, grep -c reads everything: grep -q would exit at the first match and, under
# pipefail, fail the pipe when journalctl gets SIGPIPE for the rest of its output.

# --- the root file system, cached per day ---------------------------------------------------
container_setup
scratch=$container_scratch

# --- boot ---------------------------------------------------------------------------------------
container_boot_staged
inside getent group rdma-events >/dev/null || fail "systemd-sysusers made no group rdma-events"

step "the simulator and the drop-in"
sanitizer_env=()
if [ "${SANITIZE:-0}" = 1 ]; then
  # LeakSanitizer stops the process with ptrace(), which the unit's system call filter
  # forbids; leaks are checked by the other suites, which run the same build unsandboxed.
  sanitizer_env=("Environment=ASAN_OPTIONS=detect_leaks=0")
fi
start_simulator_unit "$sim_build/bin/rdma-sim" "$sim_build/lib/rdma-sim" \
  /opt/rdma-sim-topologies/two-adapters.json "${sanitizer_env[@]}"
sim() { inside "$sim_build/bin/rdma-sim" --dir /run/rdma-sim "$@" >/dev/null; }

# --- socket activation --------------------------------------------------------------------------
step "the socket listens before the service runs"
inside systemctl enable --now rdma-eventd.socket --quiet
prop_is rdma-eventd.socket SubState listening || fail "rdma-eventd.socket is not listening"
prop_is rdma-eventd.service ActiveState inactive || fail "the service runs before any client"
inside test -S "$sock" || fail "no socket at $sock"
[ "$(inside stat -c '%a %U %G' "$sock")" = "660 root rdma-events" ] ||
  fail "$sock is $(inside stat -c '%a %U %G' "$sock"), not 660 root rdma-events"

step "a subscriber connecting starts the service"
inside socat -u "UNIX-CONNECT:$sock" - >"$scratch/client.out" 2>&1 &
client_pid=$!
wait_for 60 "hello for the subscriber" client_has '"type":"hello"'
# systemd reads READY=1 asynchronously: the hello can come first.
wait_for 20 "active service (READY=1)" prop_is rdma-eventd.service ActiveState active

step "ready, with its status, a watchdog, unprivileged"
# The status follows the subscriber.
wait_for 20 "StatusText with the subscriber" \
  prop_is rdma-eventd.service StatusText "2 devices, 3 ports up, 0 down, 1 subscriber"
prop_is rdma-eventd.service WatchdogUSec 30s ||
  fail "WatchdogUSec is $(prop rdma-eventd.service WatchdogUSec)"
main_pid=$(prop rdma-eventd.service MainPID)
status=$(inside cat "/proc/$main_pid/status")
uids=$(awk '/^Uid:/ {print $2, $3, $4, $5}' <<<"$status")
[[ $uids =~ ^([1-9][0-9]*\ ){3}[1-9][0-9]*$ ]] || fail "the daemon runs with uids $uids"
grep -q '^CapEff:[[:space:]]*0*$' <<<"$status" || fail "the daemon has capabilities"
inside journalctl --no-pager -u rdma-eventd.service | grep -c "passed by the service manager" >/dev/null ||
  fail "the daemon did not adopt the socket"

event_reaches_subscriber_and_journal

step "a report from another user's job names its uid, gid, process and unit"
# Under the shipped sandbox: the kernel's credentials and /proc as the unprivileged daemon
# sees them for a process of another user (docs/security.md, "Application reports").
inside useradd --no-create-home --groups rdma-events reporter || fail "cannot add a user"
reporter_ids="$(inside id -u reporter) $(inside id -g reporter)"
out=$(inside systemd-run --unit=job17 --uid=reporter --wait --pipe --quiet \
  rdma-eventctl report mlx5_0 qp_fatal --object 4660 --detail "from job17") ||
  fail "rdma-eventctl report as reporter failed: $out"
[[ $out =~ ^reported:\ seq\ ([0-9]+)$ ]] || fail "rdma-eventctl report printed: $out"
inside journalctl --sync
entry=$(inside journalctl --no-pager -u rdma-eventd -o json RDMA_EVENT=app_report \
  "RDMA_SEQ=${BASH_REMATCH[1]}")
got=$(jq -r '.RDMA_RECORD | fromjson | .reporter | "\(.uid) \(.gid) \(.comm) \(.unit)"' <<<"$entry")
[ "$got" = "$reporter_ids rdma-eventctl job17.service" ] ||
  fail "the report names '$got', not '$reporter_ids rdma-eventctl job17.service': $entry"
jq -e '.MESSAGE_ID == "0513127955ef45d9a80cf6a8e4e25548" and .RDMA_REPORTER_UNIT == "job17.service"' \
  <<<"$entry" >/dev/null || fail "the journal entry lacks the report's fields: $entry"

step "the report socket, passed by the unit too: a reporter of another user gets no records"
report_sock=$sock.report
inside test -S "$report_sock" || fail "no report socket at $report_sock"
[ "$(inside stat -c '%a %U %G' "$report_sock")" = "660 root rdma-events" ] ||
  fail "$report_sock is $(inside stat -c '%a %U %G' "$report_sock"), not 660 root rdma-events"
inside journalctl --no-pager -u rdma-eventd.service |
  grep -c "reporters: listening on $report_sock (passed by the service manager)" >/dev/null ||
  fail "the daemon did not adopt the report socket"
# A ping, then end of file: the daemon answers, then closes. What comes back is the hello and
# the reply, nothing else.
out=$(inside systemd-run --uid=reporter --wait --pipe --quiet \
  socat -t 5 - "UNIX-CONNECT:$report_sock" <<<'{"op":"ping","id":1}') ||
  fail "a ping on the report socket as reporter failed: $out"
[ "$(wc -l <<<"$out")" = 2 ] || fail "the report socket sent more than a hello and a reply: $out"
jq -se '.[0].type == "hello" and (.[0] | has("reporter")) and (.[0] | has("subscriber") | not)
  and .[1].type == "reply" and .[1].op == "ping"' <<<"$out" >/dev/null ||
  fail "the report socket's hello and reply: $out"
got=$(inside rdma-eventctl status --json | jq -r '.reporters | "\(.socket) \(.accepted)"')
[ "$got" = "$report_sock 1" ] || fail "the status reply's reporters: $got"

step "systemctl reload applies a changed configuration"
printf '%s\n' '{"devices": {"exclude": ["mlx5_1"]}, "severity": {"port_active": "warning"}}' |
  inside tee "$config" >/dev/null
inside systemctl reload rdma-eventd.service || fail "systemctl reload failed"
wait_for 20 "StatusText without mlx5_1" \
  prop_is rdma-eventd.service StatusText "1 device, 0 ports up, 1 down, 1 subscriber"
prop_is rdma-eventd.service MainPID "$main_pid" || fail "the reload restarted the daemon"
sim port up mlx5_0/1
wait_for 20 "port_active record" client_has '"event":"port_active"'
grep '"event":"port_active"' "$scratch/client.out" | jq -e '.severity == "warning"' >/dev/null ||
  fail "the reloaded severity does not apply"
wait_for 20 "StatusText with the port up" \
  prop_is rdma-eventd.service StatusText "1 device, 1 port up, 0 down, 1 subscriber"

step "a bad configuration: the reload keeps the running one, and its error has priority err"
printf '%s\n' '{"devices": {"exclude": ' | inside tee "$config.bad" >/dev/null
inside cp "$config" "$config.good"
inside cp "$config.bad" "$config"
inside systemctl reload rdma-eventd.service || fail "systemctl reload failed"
# What docs/operations.md tells operators to run; the daemon's own lines come on its stream.
own_errors() { inside journalctl --no-pager -u rdma-eventd -p err -o json _TRANSPORT=stdout; }
reload_failed() { own_errors | grep -c "reload failed" >/dev/null; }
wait_for 20 "the reload's error in journalctl -u rdma-eventd -p err" reload_failed
errors=$(own_errors)
[ "$(wc -l <<<"$errors")" = 1 ] || fail "the daemon's errors in the journal: $errors"
jq -e --arg prefix "reload failed, keeping the running configuration: $config: " '
  .PRIORITY == "3" and (.MESSAGE | startswith($prefix)) and .SYSLOG_IDENTIFIER == "rdma-eventd"' \
  <<<"$errors" >/dev/null || fail "the reload's error in the journal: $errors"
prop_is rdma-eventd.service StatusText "1 device, 1 port up, 0 down, 1 subscriber" ||
  fail "the bad reload changed the status: $(prop rdma-eventd.service StatusText)"
inside cp "$config.good" "$config"

step "systemctl stop ends it cleanly"
inside systemctl stop rdma-eventd.service || fail "systemctl stop failed"
prop_is rdma-eventd.service Result success || fail "Result=$(prop rdma-eventd.service Result)"
[ "$(prop rdma-eventd.service ExecMainCode):$(prop rdma-eventd.service ExecMainStatus)" = 1:0 ] ||
  fail "the daemon did not exit with status 0"
wait_for 20 "end of the subscriber's stream" bash -c "! kill -0 $client_pid"
wait "$client_pid" || fail "the subscriber's connection did not end cleanly"
client_pid=
prop_is rdma-eventd.socket SubState listening || fail "the socket stopped with the service"
inside journalctl --no-pager -u rdma-eventd.service | grep -c "SIGTERM: stopping" >/dev/null ||
  fail "no 'SIGTERM: stopping' in the journal"

step "a daemon that hangs is killed by the watchdog and restarted"
# A stopped process runs no loop, so no WATCHDOG=1. 3 s instead of the unit's 30 s, for time.
printf '%s\n' "[Service]" "WatchdogSec=3s" |
  inside tee /etc/systemd/system/rdma-eventd.service.d/watchdog-test.conf >/dev/null
inside systemctl daemon-reload
inside systemctl start rdma-eventd.service || fail "systemctl start failed"
hung_pid=$(prop rdma-eventd.service MainPID)
restarts=$(prop rdma-eventd.service NRestarts)
inside kill -STOP "$hung_pid"
restarted() {
  local pid
  pid=$(prop rdma-eventd.service MainPID)
  [ "$(prop rdma-eventd.service NRestarts)" -gt "$restarts" ] && [ "$pid" != 0 ] &&
    [ "$pid" != "$hung_pid" ] && prop_is rdma-eventd.service ActiveState active
}
wait_for 60 "restart after the watchdog" restarted
inside journalctl --no-pager -u rdma-eventd.service | grep -c "Watchdog timeout" >/dev/null ||
  fail "systemd logged no watchdog timeout"
inside test ! -d "/proc/$hung_pid" || fail "the hung daemon $hung_pid is still there"
wait_for 20 "StatusText after the restart" \
  prop_is rdma-eventd.service StatusText "1 device, 1 port up, 0 down, 0 subscribers"

echo "PASS"
