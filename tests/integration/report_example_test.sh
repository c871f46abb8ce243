#!/bin/sh
# The C example of docs/protocol.md ("report"): the code block after the line
# "<!-- report-example -->", compiled as C against the public headers, warnings as errors, and
# linked with a main() that calls it against librdma-eventd and libibverbs.
#   report_example_test.sh SOURCE_DIR C_COMPILER LIBRDMA_EVENTD [CFLAGS...] -- [LDFLAGS...]
set -eu
src=$1 cc=$2 lib=$3
shift 3
cflags=""
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  cflags="$cflags $1"
  shift
done
[ $# -gt 0 ] && shift
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
# shellcheck disable=SC2086 # the flags are words
"$cc" -std=c11 -Wall -Wextra -Werror -I"$src/lib/include" $cflags -c "$dir/example.c" \
  -o "$dir/example.o"
printf '%s\n' '#include <stddef.h>' 'void handle_async_events(void *ctx);' \
  'int main(int argc, char **argv) { (void)argv; if (argc > 99) handle_async_events(NULL); return 0; }' \
  >"$dir/main.c"
"$cc" -std=c11 -Wall -Wextra -Werror -c "$dir/main.c" -o "$dir/main.o"
"$cc" "$dir/main.o" "$dir/example.o" "$lib" -Wl,-rpath,"$(dirname "$lib")" "$@" -o "$dir/example"
"$dir/example"
echo "the report example compiles and links ($(wc -l <"$dir/example.c") lines)"
