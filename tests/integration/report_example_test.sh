#!/bin/sh
# The C example of docs/protocol.md ("report"): the code block after the line
# "<!-- report-example -->", compiled as C against the public headers, warnings as errors, exactly
# as a reader would copy it. It must report through a reporter, never waiting. The integration
# test Reports.TheDocsExampleReportsAQpFatalOnItsOwnContext links the same block (CMake builds it,
# with the build's sanitizers) and runs it against the daemon.
#   report_example_test.sh SOURCE_DIR C_COMPILER [CFLAGS...]
set -eu
src=$1 cc=$2
shift 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
awk '/<!-- report-example -->/ {found = 1; next}
     found && /^```c$/ {inside = 1; next}
     inside && /^```$/ {exit}
     inside {print}' "$src/docs/protocol.md" >"$dir/example.c"
if [ ! -s "$dir/example.c" ]; then
  echo "no report example in $src/docs/protocol.md" >&2
  exit 1
fi
grep -q 'rdmaev_reporter_send' "$dir/example.c" || { echo "the example does not report" >&2; exit 1; }
"$cc" -std=c11 -Wall -Wextra -Werror -I"$src/lib/include" "$@" -c "$dir/example.c" \
  -o "$dir/example.o"
echo "the report example compiles ($(wc -l <"$dir/example.c") lines)"
