#!/usr/bin/env bash
# One check of the kernel guest's run (tests/kernel/CMakeLists.txt): passes when the guest's
# /mnt/results (DIR/share/results) says "PASS NAME"; otherwise prints why, and the guest's log of
# that scenario. For the burst, also prints its measurements (DIR/share/bench.txt).
#   tests/kernel/result.sh DIR NAME
set -euo pipefail
dir=$1 name=$2
results=$dir/share/results
if [ ! -r "$results" ]; then
  echo "kernel test: no results in $results: the guest did not run (see kernel.guest)" >&2
  exit 1
fi
line=$(grep -E "^(PASS|FAIL) $name(:|$)" "$results" || true)
if [ "$name" = burst ] && [ -r "$dir/share/bench.txt" ]; then
  cat "$dir/share/bench.txt"
fi
case $line in
  "PASS $name") echo "$line"; exit 0 ;;
  "") echo "kernel test: the guest reported nothing for $name (it stopped before: see kernel.guest)" >&2 ;;
  *)
    echo "$line" >&2
    echo "----- the guest's log of scenario $name -----" >&2
    sed -n "/^== .* scenario $name\$/,/^== .* scenario /p" "$dir/share/guest.log" >&2 ;;
esac
exit 1
