#!/usr/bin/env bash
# rdma-eventctl history --incidents over a central journal of a simulated fleet (scale;
# docs/benchmarks.md, "history --incidents over 1,000 hosts"):
#
#   bench/incidents.sh [--hosts N] [--records M] [--runs R] [--journal DIR] [--build-dir DIR]
#
# Builds the journal with rdma-journal-gen (one file per host through systemd-journal-remote,
# as a receiver with SplitMode=host has them; kept in DIR and used again when it is there with
# the same counts), then runs `rdma-eventctl history -D DIR --incidents` R times and reports
# each run's wall time, peak RSS (getrusage, through /usr/bin/time; it counts the journal
# files' pages mapped by sd-journal), and the peak of its anonymous memory (RssAnon, read from
# /proc every 50 ms: what the program itself allocates). Defaults: 1,000 hosts, 1,000,000
# records, 3 runs. Needs systemd-journal-remote and /usr/bin/time (Debian's
# systemd-journal-remote and time).
set -euo pipefail

hosts=1000 records=1000000 runs=3 journal="" build_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --hosts) hosts=$2; shift 2 ;;
    --records) records=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --journal) journal=$2; shift 2 ;;
    --build-dir) build_dir=$2; shift 2 ;;
    *) echo "incidents.sh: unknown option '$1'" >&2; exit 64 ;;
  esac
done
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
: "${build_dir:=$root/build}"
: "${journal:=/var/tmp/rdma-incidents-bench-$hosts-$records}"
gen=$build_dir/bin/rdma-journal-gen
eventctl=$build_dir/bin/rdma-eventctl
[ -x /usr/bin/time ] || { echo "incidents.sh: /usr/bin/time is missing: apt-get install time" >&2; exit 1; }
for program in "$gen" "$eventctl"; do
  [ -x "$program" ] || { echo "incidents.sh: $program is missing: build rdma-journal-gen and rdma-eventctl" >&2; exit 1; }
done

if [ ! -f "$journal/.complete" ]; then
  rm -rf "$journal"
  mkdir -p "$journal"
  start=$(date +%s.%N)
  "$gen" --hosts "$hosts" --records "$records" --output "$journal" >"$journal/.complete.tmp"
  mv "$journal/.complete.tmp" "$journal/.complete"
  printf 'generated: %s in %.1f s\n' "$(cat "$journal/.complete")" "$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')"
fi
echo "journal: $journal, $(cat "$journal/.complete"), $(du -sh "$journal" | cut -f1) on disk, $(find "$journal" -name '*.journal' | wc -l) files"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

for run in $(seq 1 "$runs"); do
  out=$(mktemp) times=$(mktemp)
  /usr/bin/time -f '%e %M %U %S' -o "$times" "$eventctl" history -D "$journal" --incidents --json >"$out" &
  pid=$!
  # The child of /usr/bin/time is rdma-eventctl.
  peak_anon=0
  while kill -0 "$pid" 2>/dev/null; do
    for child in $(cat /proc/$pid/task/$pid/children 2>/dev/null); do
      anon=$(awk '/^RssAnon:/ {print $2}' "/proc/$child/status" 2>/dev/null || echo 0)
      [ "${anon:-0}" -gt "$peak_anon" ] && peak_anon=$anon
    done
    sleep 0.05
  done
  wait "$pid"
  read -r seconds rss_kb user sys <"$times"
  incidents=$(wc -l <"$out")
  classes=$(jq -r .class "$out" | sort | uniq -c | awk '{printf "%s%s %s", sep, $1, $2; sep=", "}')
  printf 'run %d: %s s (CPU %s s user, %s s system), peak RSS %d MiB, peak RssAnon %d MiB, %d incidents (%s)\n' \
    "$run" "$seconds" "$user" "$sys" $((rss_kb / 1024)) $((peak_anon / 1024)) "$incidents" "$classes"
  rm -f "$out" "$times"
done
