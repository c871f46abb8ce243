#!/usr/bin/env bash
# The client library's ABI, with its types, as libabigail reads it from the built library's debug
# information (abidw), against the committed baseline (abidiff): a changed function signature, a
# member added to or moved in struct rdmaev_event_report, a changed enum, a removed or added
# function, or a soname that is not the baseline's fails (docs/protocol.md, "The client library's
# ABI"). lib/CMakeLists.txt builds the C API's translation unit with full -g for this.
#
#   abi_check.sh LIBRARY HEADERS_DIR BASELINE            compare; on a difference print it and fail
#   abi_check.sh --update LIBRARY HEADERS_DIR BASELINE   write the baseline from the library
#
# Run by ctest (tests/unit/CMakeLists.txt) on the library the build made. abidw and abidiff
# (Debian: abigail-tools, in scripts/bootstrap.sh) are required: without them the check fails.
set -euo pipefail

update=false
if [ "${1:-}" = --update ]; then
  update=true
  shift
fi
[ $# -eq 3 ] || { echo "usage: $0 [--update] LIBRARY HEADERS_DIR BASELINE" >&2; exit 2; }
library=$1 headers=$2 baseline=$3

for tool in abidw abidiff objdump; do
  command -v "$tool" >/dev/null ||
    { echo "FAIL: $tool is not installed (Debian: abigail-tools, binutils)" >&2; exit 1; }
done

built_soname=$(objdump -p "$library" | awk '$1 == "SONAME" {print $2}')
[ -n "$built_soname" ] || { echo "FAIL: $library has no soname" >&2; exit 1; }

# No paths of this machine, no source lines: the baseline changes only with the ABI.
current=$(mktemp --suffix=.abi)
trap 'rm -f "$current"' EXIT
abidw --no-corpus-path --no-comp-dir-path --no-show-locs --drop-undefined-syms \
  --headers-dir "$headers" --out-file "$current" "$library"
grep -q "<elf-symbol name='rdmaev_connect'" "$current" ||
  { echo "FAIL: abidw found no rdmaev_connect in $library" >&2; exit 1; }
grep -q "<class-decl name='rdmaev_event_report'.*size-in-bits=" "$current" || {
  echo "FAIL: abidw found no type information in $library (built without -g for client_c.cc?)" >&2
  exit 1
}

if $update; then
  cp "$current" "$baseline"
  echo "wrote the ABI of $built_soname to $baseline"
  exit 0
fi

[ -f "$baseline" ] || { echo "FAIL: no baseline $baseline (write it with --update)" >&2; exit 1; }
baseline_soname=$(sed -n "s/^<abi-corpus [^>]*soname='\([^']*\)'.*/\1/p" "$baseline")
status=0
if [ "$baseline_soname" != "$built_soname" ]; then
  echo "FAIL: the baseline is the ABI of $baseline_soname, the library's soname is $built_soname" >&2
  status=1
fi
# abidiff's exit status is a bit field: 4 an ABI change, 8 an incompatible one; 1 and 2 errors.
report=$(abidiff --no-show-locs "$baseline" "$current") || status=$?
if [ $status -ne 0 ]; then
  printf '%s\n' "$report"
  cat >&2 <<MSG
FAIL: the ABI of $library differs from $baseline (above: abidiff, baseline first).
An ABI change must be deliberate, with the version that says what it is (lib/CMakeLists.txt,
RDMA_EVENTD_ABI_VERSION; lib/librdma-eventd.map; lib/exported-symbols.txt):
  - incompatible (a function removed or changed, a struct member removed, moved or retyped, an
    enumerator renumbered): a new soname, a new version node, and a baseline named after it;
  - compatible (a function added, in a new version node such as RDMA_EVENTD_2.1; a member added
    at the end of a struct that carries its size): the minor version moves, same soname.
Then write the baseline again:
  $0 --update $library $headers $baseline
MSG
  exit 1
fi
echo "PASS: the ABI of $built_soname is $baseline's"
