#!/usr/bin/env bash
# rdma-eventctl history --incidents over a central journal of a simulated fleet (scale;
# docs/benchmarks.md, "history --incidents over 10,000 hosts"):
#
#   bench/incidents.sh [--hosts N] [--records M] [--runs R] [--journal DIR] [--build-dir DIR]
#                      [--scales N,N...] [--nofile SOFT:HARD[,SOFT:HARD...]]
#                      [--days D] [--archives A] [--other-units U] [--jobs J]
#                      [--since TIME] [--until TIME] [--strace 0|1]
#
# Builds the journal with rdma-journal-gen as a receiver holds it: each host's files through
# systemd-journal-remote (SplitMode=host), the records over D days (1), U other units' entries
# per record mixed in (kernel, sshd, cron, slurmd, systemd...; 0 when not given: the earlier
# benchmark's journal of rdma-eventd's entries only, as bench/run.sh --only incidents reads it;
# the generator's realistic ratio is 100), the days split into A files per host (1), the older
# ones archives named as journal-remote names them, with their zero blocks freed (--sparse, the
# same bytes read back); J hosts written at once (the processors). The journal is kept in DIR
# and used again when it is there with the same shape.
# Then it runs `rdma-eventctl history -D DIR --incidents --json [--since T] [--until T]` R times
# for each open-file limit (prlimit;
# default a soft limit of 1024, Debian's for a login or a service, under the shell's hard
# limit) and reports each run's wall time,
# CPU time, peak RSS (getrusage, through /usr/bin/time; it counts the journal files' pages
# mapped by sd-journal), the peak of its anonymous memory (RssAnon, read from /proc every
# 50 ms: what the program itself allocates), its exit status and the incidents; the incidents
# must be the same under every limit (the script says so, or fails). --scales: also over the
# first N hosts' files (hard links in DIR.N), for time against records. Defaults: 1,000 hosts,
# 1,000,000 records, 3 runs. Files opened: one more run under the first limit, not timed, under
# `strace -f -y -e trace=openat,mmap`: the journal files it opened (each to read its header,
# whatever the window) and those it mapped (read by sd-journal: within the window); --strace 0
# leaves it out (and so does a machine without strace, saying so). Needs systemd-journal-remote,
# /usr/bin/time and prlimit (Debian's systemd-journal-remote, time, util-linux), and strace.
set -euo pipefail

# The default limit: Debian's soft limit of 1,024 (a login, a service) under this shell's hard one
# (prlimit cannot raise it without CAP_SYS_RESOURCE).
hosts=1000 records=1000000 runs=3 journal="" build_dir="" scales="" nofile="1024:$(ulimit -Hn)"
days=1 archives=1 other_units=0 jobs=$(nproc) since="" until="" use_strace=1
while [ $# -gt 0 ]; do
  case "$1" in
    --hosts) hosts=$2; shift 2 ;;
    --records) records=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --journal) journal=$2; shift 2 ;;
    --build-dir) build_dir=$2; shift 2 ;;
    --scales) scales=$2; shift 2 ;;
    --nofile) nofile=$2; shift 2 ;;
    --days) days=$2; shift 2 ;;
    --archives) archives=$2; shift 2 ;;
    --other-units) other_units=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --since) since=$2; shift 2 ;;
    --until) until=$2; shift 2 ;;
    --strace) use_strace=$2; shift 2 ;;
    *) echo "incidents.sh: unknown option '$1'" >&2; exit 64 ;;
  esac
done
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
: "${build_dir:=$root/build}"
: "${journal:=/var/tmp/rdma-incidents-bench-$hosts-$records}"
# The earlier benchmark's journal (rdma-eventd's entries only, a file per host, a day) keeps
# its name; any other shape has its own.
if [ "$days/$archives/$other_units" != "1/1/0" ] && [ "$journal" = "/var/tmp/rdma-incidents-bench-$hosts-$records" ]; then
  journal=$journal-d$days-a$archives-u$other_units
fi
window=()
[ -n "$since" ] && window+=(--since "$since")
[ -n "$until" ] && window+=(--until "$until")
gen=$build_dir/bin/rdma-journal-gen
eventctl=$build_dir/bin/rdma-eventctl
[ -x /usr/bin/time ] || { echo "incidents.sh: /usr/bin/time is missing: apt-get install time" >&2; exit 1; }
command -v prlimit >/dev/null || { echo "incidents.sh: prlimit is missing: apt-get install util-linux" >&2; exit 1; }
if [ "$use_strace" != 0 ] && ! command -v strace >/dev/null; then
  echo "incidents.sh: strace is missing (apt-get install strace): the files opened are not counted" >&2
  use_strace=0
fi
for program in "$gen" "$eventctl"; do
  [ -x "$program" ] || { echo "incidents.sh: $program is missing: build rdma-journal-gen and rdma-eventctl" >&2; exit 1; }
done

if [ ! -f "$journal/.complete" ]; then
  rm -rf "$journal"
  mkdir -p "$journal"
  start=$(date +%s.%N)
  "$gen" --hosts "$hosts" --records "$records" --days "$days" --archives "$archives" \
    --other-units "$other_units" --jobs "$jobs" --output "$journal" --sparse 1 >"$journal/.complete.tmp"
  seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  echo "generated in $seconds s ($(awk -v s="$seconds" -v h="$hosts" 'BEGIN { printf "%.3f", s / h }') s a host, $jobs at once)" >>"$journal/.complete.tmp"
  mv "$journal/.complete.tmp" "$journal/.complete"
fi
echo "journal: $journal, $(paste -sd' ' "$journal/.complete"), $(find "$journal" -name '*.journal' | wc -l) files," \
  "$(du -sh "$journal" | cut -f1) on disk ($(du -sh --apparent-size "$journal" | cut -f1) as journal-remote wrote them)"
echo "window: ${window[*]:-(none)}"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "rdma-eventctl: $eventctl ($("$eventctl" --version 2>/dev/null || echo "no --version"))"

# The first N hosts' files, as hard links (no disk), for the scales.
subset() {
  local n=$1 dir=$journal.$1
  if [ ! -f "$dir/.complete" ]; then
    rm -rf "$dir"
    mkdir -p "$dir"
    # Every file of the first N hosts (remote-HOST.journal and its archives remote-HOST@...).
    find "$journal" -maxdepth 1 -name 'remote-*.journal' | sort |
      awk -v n="$n" '{ host = $0; sub(/.*\/remote-/, "", host); sub(/[@.].*/, "", host)
                       if (!(host in seen)) { seen[host] = 1; count++ } if (count <= n) print }' |
      xargs -r ln -t "$dir"
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
      "$eventctl" history -D "$dir" --incidents --json "${window[@]}" >"$out" 2>"$out.err" &
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

# count_opened DIR LIMIT MD5: one run under strace: the journal files opened (openat: each has
# its header read) and mapped (mmap: read by sd-journal), distinct paths; its output must be
# the timed runs'.
count_opened() {
  local dir=$1 limit=$2 want=$3 trace out opened mapped
  trace=$(mktemp) out=$(mktemp)
  prlimit --nofile="$limit" strace -f -y -qq -e trace=openat,mmap -o "$trace" \
    "$eventctl" history -D "$dir" --incidents --json "${window[@]}" >"$out" 2>/dev/null || true
  opened=$(grep '^[0-9]* *openat(' "$trace" | grep -v '= -1' | grep -o '"[^"]*\.journal"' | sort -u | wc -l)
  mapped=$(grep '^[0-9]* *mmap(' "$trace" | grep -o '<[^>]*\.journal>' | sort -u | wc -l)
  echo "  files: $(find "$dir" -maxdepth 1 -name '*.journal' | wc -l) listed, $opened opened (openat), $mapped read by sd-journal (mmap), strace -f -y -e trace=openat,mmap"
  if [ "$(md5sum <"$out" | cut -d' ' -f1)" != "$want" ]; then
    echo "  DIFFERENT incidents under strace" >&2
    rm -f "$trace" "$out"
    return 1
  fi
  rm -f "$trace" "$out"
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
  [ "$use_strace" = 0 ] || count_opened "$dir" "${limits[0]}" "$first" || status=1
done
exit $status
