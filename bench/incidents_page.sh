#!/usr/bin/env bash
# rdma-eventctl history --html over a central journal of a simulated fleet, and the page it
# writes in headless Chromium (docs/benchmarks.md, "The incidents page at fleet scale"):
#
#   bench/incidents_page.sh --journal DIR [--since TIME] [--build-dir DIR] [--out DIR]
#                           [--max-bytes N] [--max-ready-ms N] [--max-anon-mib N]
#
# DIR: a journal that bench/incidents.sh (rdma-journal-gen) wrote, used as it is. Runs
# `rdma-eventctl history -D DIR --html PAGE [--since TIME]` once and reports its wall time,
# CPU time, peak resident size (getrusage, through /usr/bin/time: it counts the journal files'
# pages mapped by sd-journal) and the peak of its own memory (RssAnon, read from /proc every
# 50 ms); then the page: its bytes and elements (rows, marks, bands, table rows); then Debian's
# headless Chromium on it, twice: the DOM after its script ran (--dump-dom), with the page's own
# measure of its load (data-ready: milliseconds from the navigation's start to the end of its
# script, which runs after the whole document is parsed) and the wall time of the browser, and a
# screenshot (OUT/incidents-page.png, 1240 pixels wide). The budgets (defaults: 8 MiB of page,
# 5,000 ms to data-ready, 64 MiB of RssAnon) are checked: the script fails when one is exceeded.
# Needs chromium, /usr/bin/time.
set -euo pipefail

journal="" since="" build_dir="" out_dir="" max_bytes=$((8 << 20)) max_ready_ms=5000 max_anon_mib=64
while [ $# -gt 0 ]; do
  case "$1" in
    --journal) journal=$2; shift 2 ;;
    --since) since=$2; shift 2 ;;
    --build-dir) build_dir=$2; shift 2 ;;
    --out) out_dir=$2; shift 2 ;;
    --max-bytes) max_bytes=$2; shift 2 ;;
    --max-ready-ms) max_ready_ms=$2; shift 2 ;;
    --max-anon-mib) max_anon_mib=$2; shift 2 ;;
    -h | --help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "incidents_page.sh: unknown option '$1' (--help)" >&2; exit 64 ;;
  esac
done
[ -n "$journal" ] || { echo "incidents_page.sh: --journal DIR is needed (bench/incidents.sh writes one)" >&2; exit 64; }
[ -d "$journal" ] || { echo "incidents_page.sh: $journal: no such directory" >&2; exit 66; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
: "${build_dir:=$root/build}"
eventctl=$build_dir/bin/rdma-eventctl
[ -x "$eventctl" ] || { echo "incidents_page.sh: $eventctl is missing: build rdma-eventctl" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "incidents_page.sh: /usr/bin/time is missing: apt-get install time" >&2; exit 1; }
command -v chromium >/dev/null || { echo "incidents_page.sh: chromium is missing: apt-get install chromium" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
: "${out_dir:=$work}"
page=$out_dir/incidents-page.html

echo "journal: $journal, $(find "$journal" -maxdepth 1 -name '*.journal' | wc -l) files"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
args=(history -D "$journal" --html "$page")
[ -n "$since" ] && args+=(--since "$since")
echo "command: rdma-eventctl ${args[*]}"

/usr/bin/time -f '%e %M %U %S' -o "$work/times" "$eventctl" "${args[@]}" 2>"$work/err" &
timer=$!
peak_anon=0
# /usr/bin/time's one child is rdma-eventctl.
while kill -0 "$timer" 2>/dev/null; do
  child=$(cat "/proc/$timer/task/$timer/children" 2>/dev/null || true)
  if [ -n "$child" ]; then
    anon=$(sed -n 's/^RssAnon:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/${child% }/status" 2>/dev/null || true)
    [ "${anon:-0}" -gt "$peak_anon" ] && peak_anon=$anon
  fi
  sleep 0.05
done
status=0
wait "$timer" || status=$?
read -r seconds rss_kb user sys <"$work/times"
printf 'rdma-eventctl: %s s (CPU %s s user, %s s system), peak RSS %d MiB, peak RssAnon %d MiB, exit %d\n' \
  "$seconds" "$user" "$sys" $((rss_kb / 1024)) $((peak_anon / 1024)) "$status"
sed 's/^/  stderr: /' "$work/err" | head -5
[ -s "$page" ] || { echo "incidents_page.sh: no page was written" >&2; exit 1; }

bytes=$(stat -c %s "$page")
count() { grep -o "$1" "$page" | wc -l; }
printf 'page: %d bytes; %d rows, %d marks, %d bands, %d rows of the table, %d hosts to search\n' \
  "$bytes" "$(count '<g class="row"')" "$(count 'class="mark ')" "$(count '<g class="band"')" \
  "$(count '<tr class="incident"')" "$(count '<option value=')"

browser=(chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking
  --disable-component-update --disable-sync --user-data-dir="$work/profile")
start=$(date +%s%N)
"${browser[@]}" --dump-dom "file://$page" >"$work/dom" 2>/dev/null
browser_ms=$((($(date +%s%N) - start) / 1000000))
ready=$(grep -o 'data-ready="[0-9]*"' "$work/dom" | grep -o '[0-9]*' || true)
summary=$(grep -o '<span id="summary">[^<]*' "$work/dom" | sed 's/.*>//' || true)
echo "chromium: the page's script ended ${ready:-never} ms after its start (\"$summary\"); the browser took $browser_ms ms in all"
"${browser[@]}" --screenshot="$out_dir/incidents-page.png" --window-size=1240,1400 --hide-scrollbars \
  "file://$page" >/dev/null 2>&1
echo "screenshot: $out_dir/incidents-page.png"

failed=0
over() { echo "OVER BUDGET: $1" >&2; failed=1; }
[ "$status" = 0 ] || over "rdma-eventctl's exit status $status"
[ "$bytes" -le "$max_bytes" ] || over "the page has $bytes bytes, more than $max_bytes"
[ -n "$ready" ] && [ "$ready" -le "$max_ready_ms" ] || over "data-ready ${ready:-never}, the budget $max_ready_ms ms"
[ $((peak_anon / 1024)) -le "$max_anon_mib" ] || over "RssAnon $((peak_anon / 1024)) MiB, the budget $max_anon_mib MiB"
[ $failed = 0 ] && echo "within budget: page <= $max_bytes bytes, data-ready <= $max_ready_ms ms, RssAnon <= $max_anon_mib MiB"
exit $failed
