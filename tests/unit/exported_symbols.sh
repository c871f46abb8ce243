#!/usr/bin/env bash
# The client library's exported symbols, as nm lists them (demangled, each with its version
# node), against the committed list: any change to the ABI of librdma-eventd.so is a deliberate
# commit that changes lib/exported-symbols.txt too (docs/protocol.md, "The client library's ABI").
#
#   exported_symbols.sh LIBRARY LIST            compare; on a difference print it and fail
#   exported_symbols.sh --update LIBRARY LIST   write the list from the library
#
# Run by ctest (tests/unit/CMakeLists.txt) on the library the build made.
set -euo pipefail

update=false
if [ "${1:-}" = --update ]; then
  update=true
  shift
fi
[ $# -eq 2 ] || { echo "usage: $0 [--update] LIBRARY LIST" >&2; exit 2; }
library=$1 list=$2

# "0000000000012340 T rdmaev_next@@RDMA_EVENTD_1": the name with its version, without the
# address and the type letter (whether a function is weak or strong is not the ABI).
exported=$(nm -D --defined-only --with-symbol-versions -C "$library" | cut -d' ' -f3- |
  LC_ALL=C sort)
[ -n "$exported" ] || { echo "FAIL: nm lists no symbol in $library" >&2; exit 1; }

if $update; then
  printf '%s\n' "$exported" >"$list"
  echo "wrote $(wc -l <"$list") symbols to $list"
  exit 0
fi

if ! diff -u --label "$list (committed)" --label "$library (built)" "$list" - <<<"$exported"; then
  cat >&2 <<MSG
FAIL: the symbols $library exports differ from $list (above: - committed, + built).
An ABI change must be deliberate: a removed or changed symbol needs a new soname, an added one a
new version node (lib/librdma-eventd.map). When it is, update the list:
  $0 --update $library $list
MSG
  exit 1
fi
echo "PASS: $(wc -l <<<"$exported") symbols, as $list lists them"
