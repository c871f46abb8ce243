#!/usr/bin/env bash
# rdma-eventctl history --incidents over a central journal of a simulated fleet (scale;
# docs/benchmarks.md, "history --incidents over 10,000 hosts"):
#
#   bench/incidents.sh [--hosts N] [--records M] [--runs R] [--journal DIR] [--build-dir DIR]
#                      [--scales N,N...] [--nofile SOFT:HARD[,SOFT:HARD...]]
#
# Builds the journal with rdma-journal-gen (one file per host through systemd-journal-remote,
# as a receiver with SplitMode=host has them, with their zero blocks freed: --sparse, the same
# bytes read back; kept in DIR and used again when it is there with the same counts), then runs
# `rdma-eventctl history -D DIR --incidents --json` R times for each open-file limit (prlimit;
# default a soft limit of 1024, Debian's for a login or a service, under the shell's hard
# limit) and reports each run's wall time,
# CPU time, peak RSS (getrusage, through /usr/bin/time; it counts the journal files' pages
# mapped by sd-journal), the peak of its anonymous memory (RssAnon, read from /proc every
# 50 ms: what the program itself allocates), its exit status and the incidents; the incidents
# must be the same under every limit (the script says so, or fails). --scales: also over the
# first N hosts' files (hard links in DIR.N), for time against records. Defaults: 1,000 hosts,
# 1,000,000 records, 3 runs. Needs systemd-journal-remote, /usr/bin/time and prlimit (Debian's
# systemd-journal-remote, time, util-linux).
set -euo pipefail

# The default limit: Debian's soft limit of 1,024 (a login, a service) under this shell's hard one
# (prlimit cannot raise it without CAP_SYS_RESOURCE).
hosts=1000 records=1000000 runs=3 journal="" build_dir="" scales="" nofile="1024:$(ulimit -Hn)"
while [ $# -gt 0 ]; do
  case "$1" in
    --hosts) hosts=$2; shift 2 ;;
    --records) records=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --journal) journal=$2; shift 2 ;;
    --build-dir) build_dir=$2; shift 2 ;;
    --scales) scales=$2; shift 2 ;;
    --nofile) nofile=$2; shift 2 ;;
    *) echo "incidents.sh: unknown option '$1'" >&2; exit 64 ;;
  esac
done
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
: "${build_dir:=$root/build}"
: "${journal:=/var/tmp/rdma-incidents-bench-$hosts-$records}"
gen=$build_dir/bin/rdma-journal-gen
eventctl=$build_dir/bin/rdma-eventctl
[ -x /usr/bin/time ] || { echo "incidents.sh: /usr/bin/time is missing: apt-get install time" >&2; exit 1; }
command -v prlimit >/dev/null || { echo "incidents.sh: prlimit is missing: apt-get install util-linux" >&2; exit 1; }
for program in "$gen" "$eventctl"; do
  [ -x "$program" ] || { echo "incidents.sh: $program is missing: build rdma-journal-gen and rdma-eventctl" >&2; exit 1; }
done

if [ ! -f "$journal/.complete" ]; then
  rm -rf "$journal"
  mkdir -p "$journal"
  start=$(date +%s.%N)
  "$gen" --hosts "$hosts" --records "$records" --output "$journal" --sparse 1 >"$journal/.complete.tmp"
  mv "$journal/.complete.tmp" "$journal/.complete"
  printf 'generated: %s in %.1f s\n' "$(cat "$journal/.complete")" "$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')"
fi
echo "journal: $journal, $(cat "$journal/.complete"), $(find "$journal" -name '*.journal' | wc -l) files," \
  "$(du -sh "$journal" | cut -f1) on disk ($(du -sh --apparent-size "$journal" | cut -f1) as journal-remote wrote them)"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "rdma-eventctl: $eventctl ($("$eventctl" --version 2>/dev/null || echo "no --version"))"

# The first N hosts' files, as hard links (no disk), for the scales.
subset() {
  local n=$1 dir=$journal.$1
  if [ ! -f "$dir/.complete" ]; then
    rm -rf "$dir"
    mkdir -p "$dir"
    find "$journal" -maxdepth 1 -name '*.journal' | sort | head -n "$n" | xargs -r ln -t "$dir"
    touch "$dir/.complete"
  fi
  echo "$dir"
}

# run DIR LIMIT: R runs; prints a line each; leaves the last run's output in $last_out.
last_out=$(mktemp)
trap 'rm -f "$last_out"' EXIT
run_all() {
  local dir=$1 limit=$2 run out times pid peak_anon anon status seconds rss_kb user sys incidents classes
  for run in $(seq 1 "$runs"); do
    out=$(mktemp) times=$(mktemp)
    status=0
    prlimit --nofile="$limit" /usr/bin/time -f '%e %M %U %S' -o "$times" \
      "$eventctl" history -D "$dir" --incidents --json >"$out" 2>"$out.err" &
    pid=$!
    # The child of prlimit's /usr/bin/time is rdma-eventctl (prlimit execs).
    peak_anon=0
    while kill -0 "$pid" 2>/dev/null; do
      for child in $(cat /proc/$pid/task/$pid/children 2>/dev/null); do
        anon=$(awk '/^RssAnon:/ {print $2}' "/proc/$child/status" 2>/dev/null || echo 0)
        [ "${anon:-0}" -gt "$peak_anon" ] && peak_anon=$anon
      done
      sleep 0.05
    done
    wait "$pid" || status=$?
    if ! read -r seconds rss_kb user sys < <(tail -n 1 "$times") || [ -z "$sys" ]; then
      echo "  nofile $limit, run $run: no times (exit $status):" >&2
      sed 's/^/    /' "$out.err" >&2
      rm -f "$out" "$out.err" "$times"
      return 1
    fi
    incidents=$(grep -c . "$out" || true)
    # jq fails on output that is not JSON: said as such, not the end of the script.
    classes=$( (jq -r .class "$out" 2>/dev/null || echo "(not JSON)") | sort | uniq -c |
      awk '{printf "%s%s %s", sep, $1, $2; sep=", "}')
    printf '  nofile %s, run %d: %s s (CPU %s s user, %s s system), peak RSS %d MiB, peak RssAnon %d MiB, exit %d, %d incidents (%s)\n' \
      "$limit" "$run" "$seconds" "$user" "$sys" $((rss_kb / 1024)) $((peak_anon / 1024)) "$status" "$incidents" "$classes"
    if [ -s "$out.err" ]; then sed 's/^/    stderr: /' "$out.err" | head -5; fi
    mv "$out" "$last_out"
    rm -f "$out.err" "$times"
  done
}

dirs=()
if [ -n "$scales" ]; then
  IFS=, read -r -a sizes <<<"$scales"
  for n in "${sizes[@]}"; do
    if [ "$n" -ge "$hosts" ]; then dirs+=("$journal"); else dirs+=("$(subset "$n")"); fi
  done
else
  dirs=("$journal")
fi

IFS=, read -r -a limits <<<"$nofile"
status=0
for dir in "${dirs[@]}"; do
  files=$(find "$dir" -maxdepth 1 -name '*.journal' | wc -l)
  echo "$dir: $files files"
  first=""
  for limit in "${limits[@]}"; do
    run_all "$dir" "$limit"
    sum=$(md5sum <"$last_out" | cut -d' ' -f1)
    if [ -z "$first" ]; then
      first=$sum
    elif [ "$sum" != "$first" ]; then
      echo "  DIFFERENT incidents with nofile $limit than with ${limits[0]}" >&2
      status=1
    fi
  done
  [ ${#limits[@]} -gt 1 ] && [ "$status" = 0 ] && echo "  the same incidents under every limit (md5 $first)"
done
exit $status
