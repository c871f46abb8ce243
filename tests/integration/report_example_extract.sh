#!/bin/sh
# The C example of docs/protocol.md ("report"), the code block after "<!-- report-example -->",
# made into a source file that report_example_main.c can run: the block as it is printed, then
# report_example_run(ctx), which calls the block's function that takes the ibv_context, whatever
# it is named and whatever it returns.
#   report_example_extract.sh PROTOCOL_MD OUT_C
set -eu
doc=$1 out=$2
block=$(awk '/<!-- report-example -->/ {found = 1; next}
             found && /^```c$/ {inside = 1; next}
             inside && /^```$/ {exit}
             inside {print}' "$doc")
if [ -z "$block" ]; then
  echo "report_example_extract.sh: no report example in $doc" >&2
  exit 1
fi
# The first function defined (not only declared) with one parameter, a struct ibv_context *.
entry=$(printf '%s\n' "$block" |
  sed -n 's/^[A-Za-z_][A-Za-z0-9_ ]*[ *]\([A-Za-z_][A-Za-z0-9_]*\)( *struct ibv_context *\* *[A-Za-z0-9_]* *) *{* *$/\1/p' |
  head -n 1)
if [ -z "$entry" ]; then
  echo "report_example_extract.sh: the example in $doc defines no function of a struct ibv_context *" >&2
  exit 1
fi
{
  printf '%s\n' "$block"
  printf '\nvoid report_example_run(struct ibv_context *ctx);\n'
  printf 'void report_example_run(struct ibv_context *ctx) { %s(ctx); }\n' "$entry"
} >"$out.tmp"
mv "$out.tmp" "$out"
