#!/usr/bin/env bash
# The journal budget against journald's own rate limit, under a real systemd as PID 1 with
# journald's default configuration (no RateLimitBurst= override: 10,000 entries per 30 s per
# unit). The staged install runs as the service on the simulator (as in container_test.sh), with
# the default journal budget. Then:
#   a storm of 100,000 events reaches a subscriber whole (every record from its first on,
#   nothing lost: the 100,000 event records and the ports' flapping verdicts, which port
#   health, on by default, adds); the
#   journal holds the budgeted records and the summaries that the summaries' timer writes, and
#   together they account for every record exactly once (no gap, no overlap); journald
#   suppressed nothing (no "Suppressed" line, and it holds every entry the daemon wrote);
#   and, to show that this journald does limit a unit: a unit writing 300,000 lines at once
#   leaves the journal holding fewer of them.
# Needs root. Run by ctest. Every wait is bounded. The container machinery is container_lib.sh's.
set -euo pipefail
: "${BUILD_DIR:?run it through ctest}"

# shellcheck source-path=SCRIPTDIR source=container_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/container_lib.sh"

config=$SYSCONF_DIR/rdma-eventd/rdma-eventd.json
sock=/run/rdma-eventd/events.sock
summary_id=a105a327ff284edaa9d0ced1b833b9d9
storm=100000
client_pid=

diagnostics() {
  echo "--- systemctl status" >&2
  timeout 20 nsenter -t "$C" -m -u -i -n -p -C systemctl status --no-pager --lines=0 \
    rdma-eventd.service rdma-sim.service >&2 || true
  echo "--- the daemon's own log, journald's" >&2
  timeout 20 nsenter -t "$C" -m -u -i -n -p -C journalctl --no-pager -o short-monotonic \
    -u rdma-eventd.service _TRANSPORT=stdout | tail -30 >&2 || true
  timeout 20 nsenter -t "$C" -m -u -i -n -p -C journalctl --no-pager -o short-monotonic \
    -u systemd-journald.service | tail -10 >&2 || true
  if [ -s "$scratch/stream.jsonl" ]; then
    echo "--- the subscriber's last line" >&2
    tail -n 1 "$scratch/stream.jsonl" | cut -c1-300 >&2
  fi
}

eventctl_status() { inside "$BIN_DIR/rdma-eventctl" status --json; }

container_setup
scratch=$container_scratch

container_boot_staged

step "journald's rate limit is its default, and the unit does not change it"
overrides=$(inside systemd-analyze cat-config systemd/journald.conf | grep -E '^[[:space:]]*RateLimit' || true)
[ -z "$overrides" ] || fail "journald.conf in the container sets: $overrides"
for p in LogRateLimitIntervalUSec LogRateLimitBurst; do
  value=$(prop rdma-eventd.service "$p")
  [ "$value" = 0 ] || fail "rdma-eventd.service sets $p=$value"
done

step "the simulator, the drop-in, a subscriber"
start_simulator_unit "$sim_build/bin/rdma-sim" "$sim_build/lib/rdma-sim" \
  /opt/rdma-sim-topologies/two-adapters.json
sim() { inside "$sim_build/bin/rdma-sim" --dir /run/rdma-sim "$@" >/dev/null; }
# The journal budget's defaults; a subscriber queue of 64 MiB, so that the subscriber (socat
# writing a file) keeps up with a storm that the journal no longer slows down.
printf '%s\n' '{"socket": {"max_queued_bytes": 67108864}}' | inside tee "$config" >/dev/null
inside systemctl enable --now rdma-eventd.socket --quiet
# Connecting starts the service: the subscriber is there from the first event on.
inside socat -u "UNIX-CONNECT:$sock" - >"$scratch/stream.jsonl" 2>&1 &
client_pid=$!
wait_for 60 "hello for the subscriber" grep -q '"type":"hello"' "$scratch/stream.jsonl"
wait_for 20 "active service (READY=1)" prop_is rdma-eventd.service ActiveState active
stream=$(eventctl_status | jq -r .daemon.stream)

step "a storm of $storm events"
sim storm --count "$storm"
# The storm's events are port_err and port_active records; a port_health record follows its
# cause at once, so the last storm record is the stream's last but for that.
storm_records() { grep -c '"event":"port_\(err\|active\)"' "$scratch/stream.jsonl" || true; }
storm_arrived() { [ "$(storm_records)" -ge "$1" ]; }
wait_for 120 "$storm storm records at the subscriber" storm_arrived "$storm"

step "the summaries come when their intervals end"
# Every record the budget refused is in a summary once the sum of the summaries' counts is the
# daemon's count of records not journaled.
journal_fields=RDMA_SEQ,MESSAGE_ID,RDMA_BUDGET_SCOPE,RDMA_DEVICE,RDMA_PORT,RDMA_FIRST_SEQ
journal_fields+=,RDMA_LAST_SEQ,RDMA_NOT_JOURNALED,RDMA_JOURNALED_BETWEEN
read_journal() {
  inside journalctl --sync
  inside journalctl --no-pager -u rdma-eventd.service -o json --output-fields="$journal_fields" \
    "RDMA_STREAM=$stream" >"$scratch/journal.jsonl"
}
summaries_complete() {
  read_journal
  local summarized refused
  summarized=$(jq -s --arg id "$summary_id" \
    '[.[] | select(.MESSAGE_ID == $id) | .RDMA_NOT_JOURNALED | tonumber] | add // 0' \
    "$scratch/journal.jsonl")
  refused=$(eventctl_status | jq .journal.not_journaled)
  [ "$refused" -gt 0 ] && [ "$summarized" = "$refused" ]
}
wait_for 40 "summaries for every record not journaled" summaries_complete
status=$(eventctl_status)

step "the subscriber got all $storm records, in order, nothing lost"
if grep -q '"type":"lost"' "$scratch/stream.jsonl"; then fail "the subscriber lost records"; fi
jq -r 'select(.schema) | "\(.seq) \(if has("port") then "\(.device)/\(.port)" else "host" end) \(.event)"' \
  "$scratch/stream.jsonl" >"$scratch/keys.txt"
records=$(jq .counters.records <<<"$status")
# The ports' first health verdicts are published when the daemon starts, before it accepts the
# connection that started it: the subscriber's stream begins after them, at most at seq 4.
awk -v n="$records" -v storm="$storm" 'NR == 1 { first = $1 }
  $1 != first + NR - 1 { print "record " NR " has seq " $1 " after seq " first; exit 1 }
  $3 == "port_err" || $3 == "port_active" { storms++; next }
  $3 == "port_health" { health++; next }
  { print "seq " $1 " is a " $3 " record"; exit 1 }
  END {
    if (first > 4) { print "the stream begins at seq " first; exit 1 }
    if (first + NR - 1 != n) { print "seq " first " to " first + NR - 1 ", the daemon made " n; exit 1 }
    if (storms != storm) { print storms " storm records, not " storm; exit 1 }
    # The first verdicts before the stream, and each of the 3 ports flapping in the storm.
    if (first - 1 + health != 6) { print first - 1 + health " port_health records, not 6"; exit 1 }
  }' "$scratch/keys.txt" ||
  fail "the subscriber's stream is not every record from seq 1 on"

step "the journal and the summaries account for every record exactly once"
jq -r --arg id "$summary_id" 'if .MESSAGE_ID == $id then
    "S \(if .RDMA_BUDGET_SCOPE == "host" then "host" else "\(.RDMA_DEVICE)/\(.RDMA_PORT)" end) \(.RDMA_FIRST_SEQ) \(.RDMA_LAST_SEQ) \(.RDMA_NOT_JOURNALED) \(.RDMA_JOURNALED_BETWEEN)"
  else "J \(.RDMA_SEQ)" end' "$scratch/journal.jsonl" >"$scratch/journal.txt"
# keys.txt: "seq port" per record; journal.txt: "J seq" per journaled record, "S port first last
# not_journaled journaled_between" per summary. A summary's range holds exactly
# not_journaled + journaled_between records of its port, journaled_between of them journaled.
awk 'FNR == NR { key[$1] = $2; last = $1; next }
  $1 == "J" { if (journaled[$2]++) { print "seq " $2 " journaled twice"; bad = 1 }; records++; next }
  $1 == "S" { summary[++summaries] = $0 }
  END {
    for (i = 1; i <= summaries; i++) {
      split(summary[i], f, " ")
      in_range = 0; journaled_in = 0
      for (q = f[3]; q <= f[4]; q++) {
        if (key[q] != f[2]) continue
        in_range++
        if (q in journaled) journaled_in++; else summarized[q]++
      }
      if (in_range != f[5] + f[6] || journaled_in != f[6]) {
        print "summary \"" summary[i] "\": " in_range " records of " f[2] " in its range, " \
          journaled_in " of them journaled"
        bad = 1
      }
    }
    for (q = 1; q <= last; q++) {
      times = (q in journaled) + (q in summarized ? summarized[q] : 0)
      if (times != 1 && shown++ < 10) { print "seq " q " is accounted for " times " times"; bad = 1 }
    }
    print records " records journaled, " summaries " summaries" > "/dev/stderr"
    exit bad
  }' "$scratch/keys.txt" "$scratch/journal.txt" || fail "the journal does not account for every record"
journaled=$(grep -c '^J ' "$scratch/journal.txt")
summaries=$(grep -c '^S ' "$scratch/journal.txt")
[ "$summaries" -ge 3 ] || fail "$summaries summaries for a storm on 3 ports"
# The host's burst and 30 s of its rate, at most: 2,000 + 30 x 100.
[ "$journaled" -le 5000 ] || fail "$journaled records journaled: more than the budget allows"

step "journald suppressed nothing"
[ "$(jq .journal.written <<<"$status")" = "$journaled" ] ||
  fail "the daemon wrote $(jq .journal.written <<<"$status") records, the journal holds $journaled"
[ "$(jq .journal.summaries <<<"$status")" = "$summaries" ] ||
  fail "the daemon wrote $(jq .journal.summaries <<<"$status") summaries, the journal holds $summaries"
suppressed=$(inside journalctl --no-pager -o cat | grep -c 'Suppressed' || true)
[ "$suppressed" = 0 ] || fail "journald suppressed messages: $(inside journalctl --no-pager | grep Suppressed)"
inside journalctl --no-pager -x -u rdma-eventd.service "MESSAGE_ID=$summary_id" |
  grep -c "Defined-By: rdma-eventd" >/dev/null || fail "journalctl -x shows no catalog text for a summary"

step "this journald does drop the entries of a unit that writes faster than its limit"
# The control, from a unit that writes faster than any daemon: journald's limit is per unit and
# per interval (10,000 per 30 s, the burst scaled up to about 6x by free disk space), so a
# writer slower than that (a sanitizer build, a loaded machine) would be let through whole and
# show nothing. `seq` writes 300,000 lines to its journal stream in well under one interval.
probe_lines=300000
inside systemd-run --quiet --wait --unit=rate-probe.service -p StandardOutput=journal \
  seq 1 "$probe_lines" || fail "the rate probe unit failed"
# A sync returns once journald has dealt with the input already queued to it.
inside journalctl --sync || fail "journalctl --sync failed"
kept=$(inside journalctl --no-pager -o cat -u rate-probe.service _TRANSPORT=stdout | wc -l)
echo "journald kept $kept of the probe's $probe_lines lines"
[ "$kept" -ge 10000 ] || fail "journald kept $kept lines: fewer than its default burst"
[ "$kept" -lt "$probe_lines" ] || fail "journald kept all $probe_lines lines: its rate limit is not in force"

echo "PASS"
