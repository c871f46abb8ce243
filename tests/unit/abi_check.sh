#!/usr/bin/env bash
# The client library's ABI, with its types, as libabigail reads it from the built library's debug
# information (abidw), against the committed baseline (abidiff): a changed function signature, a
# member added to or moved in struct rdmaev_event_report, a changed enum, a removed or added
# function, or a soname that is not the baseline's fails (docs/protocol.md, "The client library's
# ABI"). lib/CMakeLists.txt builds the C API's translation unit with full -g for this. The ABI
# holds the public API only: private types dropped (--drop-private-types, and
# lib/abi/public-types.suppr for what that option leaves).
#
#   abi_check.sh LIBRARY HEADERS_DIR BASELINE            compare; on a difference print it and fail
#   abi_check.sh --update LIBRARY HEADERS_DIR BASELINE   write the baseline from the library
#   abi_check.sh --catches LIBRARY HEADERS_DIR BASELINE  show that the comparison fails on a changed
#                 public struct: the library's ABI with struct rdmaev_event_report grown by a
#                 member, and with a member retyped, must each differ from the baseline
#
# Run by ctest (tests/unit/CMakeLists.txt) on the library the build made. abidw and abidiff
# (Debian: abigail-tools, in scripts/bootstrap.sh) are required: without them the check fails.
set -euo pipefail

mode=check
case "${1:-}" in
  --update) mode=update; shift ;;
  --catches) mode=catches; shift ;;
esac
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
suppressions=$(dirname "$baseline")/public-types.suppr
[ -f "$suppressions" ] || { echo "FAIL: $suppressions is missing" >&2; exit 1; }
abidw --no-corpus-path --no-comp-dir-path --no-show-locs --drop-undefined-syms \
  --headers-dir "$headers" --drop-private-types --suppressions "$suppressions" \
  --out-file "$current" "$library"
grep -q "<elf-symbol name='rdmaev_connect'" "$current" ||
  { echo "FAIL: abidw found no rdmaev_connect in $library" >&2; exit 1; }
grep -q "<class-decl name='rdmaev_event_report'.*size-in-bits=" "$current" || {
  echo "FAIL: abidw found no type information in $library (built without -g for client_c.cc?)" >&2
  exit 1
}

# Nothing private: no C++ namespace, no class but the public structs.
private=$(grep -o "<\(namespace-decl\|class-decl\) name='[^']*'" "$current" | grep -v "name='rdmaev_" || true)
[ -z "$private" ] || { echo "FAIL: the ABI holds private types:" >&2; printf '%s\n' "$private" | sort -u | head -20 >&2; exit 1; }

if [ "$mode" = update ]; then
  cp "$current" "$baseline"
  echo "wrote the ABI of $built_soname to $baseline"
  exit 0
fi

[ -f "$baseline" ] || { echo "FAIL: no baseline $baseline (write it with --update)" >&2; exit 1; }

if [ "$mode" = catches ]; then
  # Two libraries that differ from the baseline only in struct rdmaev_event_report, made by
  # editing the library's own ABI: a member added at its end (the struct 64 bits larger), and
  # its member `port` (uint32_t) turned into a 64-bit one. abidiff must report each.
  grown=$(mktemp --suffix=.abi) retyped=$(mktemp --suffix=.abi)
  trap 'rm -f "$current" "$grown" "$retyped"' EXIT
  report_id=$(sed -n "s/.*<class-decl name='rdmaev_event_report' size-in-bits='\([0-9]*\)'.*id='\(type-id-[0-9]*\)'.*/\1 \2/p" "$current")
  read -r size _ <<<"$report_id"
  [ -n "$size" ] || { echo "FAIL: no struct rdmaev_event_report with a size in the ABI" >&2; exit 1; }
  long_id=$(sed -n "s/.*<type-decl name='unsigned long int' size-in-bits='64' id='\(type-id-[0-9]*\)'.*/\1/p" "$current" | head -1)
  awk -v size="$size" -v grown=$((size + 64)) -v long="$long_id" '
    /<class-decl name=.rdmaev_event_report. size-in-bits=/ { sub("size-in-bits=.[0-9]*.", "size-in-bits=\x27" grown "\x27"); inside = 1 }
    inside && /<\/class-decl>/ {
      print "      <data-member access=\x27public\x27 layout-offset-in-bits=\x27" size "\x27>"
      print "        <var-decl name=\x27added\x27 type-id=\x27" long "\x27 visibility=\x27default\x27/>"
      print "      </data-member>"
      inside = 0
    }
    { print }' "$current" >"$grown"
  awk -v long="$long_id" '
    /<class-decl name=.rdmaev_event_report. size-in-bits=/ { inside = 1 }
    inside && /<var-decl name=.port. / { sub("type-id=.type-id-[0-9]*.", "type-id=\x27" long "\x27") }
    inside && /<\/class-decl>/ { inside = 0 }
    { print }' "$current" >"$retyped"
  status=0
  for variant in grown retyped; do
    file=${!variant}
    if cmp -s "$file" "$current"; then
      echo "FAIL: the $variant variant could not be made (the ABI's layout changed?)" >&2; status=1; continue
    fi
    if report=$(abidiff --no-show-locs "$baseline" "$file"); then
      echo "FAIL: abidiff found no difference with struct rdmaev_event_report $variant" >&2; status=1
    else
      echo "PASS: struct rdmaev_event_report $variant: abidiff says (exit $?):"
      printf '%s\n' "$report" | grep -E "rdmaev_event_report|size|type of|added|changed" | head -8 | sed 's/^/  /'
    fi
  done
  exit $status
fi
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
