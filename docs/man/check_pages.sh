#!/usr/bin/env bash
# The manual pages against the programs they document, so that an option, a command, a
# configuration key or a C function added without its documentation fails the build's tests:
#   - every option that `rdma-eventd --help`, `rdma-eventctl --help` and `rdma-sim --help`
#     print is in the program's page; every command that the help lists has its own
#     subsection ("## NAME" in the source), and every option of the command's own help
#     (`rdma-eventctl CMD --help`, `rdma-sim help CMD`) is in that subsection or in the page's
#     OPTIONS (the options every command takes);
#   - every key of the shipped configuration (config/rdma-eventd.json, which holds every key
#     with its default) is in rdma-eventd.json(5), and every function, status and kind of
#     lib/include/rdma_eventd/client.h in librdma-eventd(3);
#   - `MANWIDTH=80 man --warnings -l PAGE` renders each page without a word on stderr, and so
#     does lintian's own check (-Tutf8).
# Options and commands are parsed out of the help texts, not listed here.
#   - every option of `rdma-eventd-slurm --help` and every configuration key it knows is in
#     rdma-eventd-slurm(8);
# Usage: check_pages.sh MAN_DIR RDMA_EVENTD RDMA_EVENTCTL RDMA_SIM SOURCE_DIR RDMA_EVENTD_SLURM
# (ctest runs it).
set -euo pipefail

man_dir=$1 eventd=$2 eventctl=$3 sim=$4 source_dir=$5 slurm=$6
failures=0
scratch=$(mktemp -d /tmp/rdma-man-XXXXXX)
trap 'rm -rf "$scratch"' EXIT

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# The page as text, one paragraph per line (no wrapping, no hyphenation), ASCII.
render_flat() { LC_ALL=C MANWIDTH=10000 man -l "$man_dir/$1" 2>/dev/null; }

# The lines of one section (a heading at column 0) or subsection (at column 3) of a rendered
# page, without the heading; empty when there is none.
section_of() {
  awk -v want="$2" -v indent="$3" '
    function heading(line) { return indent == 0 ? line ~ /^[^ ]/ : line ~ /^(   )?[^ ]/ }
    in_it && heading($0) { exit }
    in_it { print }
    $0 == sprintf("%" indent "s%s", "", want) { in_it = 1 }' "$1"
}

# The options a help text names: -x and --long-name, where they stand as options.
options_in() {
  grep -oE '(^|[][[:space:](,|"])--?[[:alpha:]][[:alnum:]-]*' <<<"$1" |
    sed -E 's/^[^-]*//' | grep -E '^(-[[:alpha:]]|--[[:alnum:]-]+)$' | sort -u || true
}

# has TEXT WORD: WORD stands alone in TEXT (not as a part of a longer name).
has() { grep -qE "(^|[^[:alnum:]_.-])${2//./[.]}([^[:alnum:]_-]|$)" <<<"$1"; }

check_options() { # PAGE WHAT HELP TEXT...: every option of HELP in one of the TEXTs
  local page=$1 what=$2 help=$3 option
  shift 3
  for option in $(options_in "$help"); do
    local found=0 text
    for text in "$@"; do has "$text" "$option" && found=1 && break; done
    [ "$found" = 1 ] || fail "$page: $option ($what) is not documented"
  done
}

# check_command PAGE COMMAND WHAT HELP...: PAGE has a subsection for COMMAND, and documents
# every option the command's help (the output of HELP..., WHAT names it) names there or among
# the program's options ($global). `help` has no options of its own.
check_command() {
  local page=$1 command=$2 what=$3 sub
  shift 3
  sub=$(section_of "$scratch/$page.txt" "$command" 3)
  [ -n "$sub" ] || { fail "$page: no subsection for the command '$command'"; return; }
  [ "$command" = help ] && return
  check_options "$page" "$what" "$("$@")" "$sub" "$global"
}

# check_program PAGE NAME PROGRAM: PAGE documents every option of `NAME --help`; sets $page,
# $global (the page's OPTIONS section) and $help (the program's help) for its commands' checks.
check_program() {
  page=$1
  global=$(section_of "$scratch/$page.txt" OPTIONS 0)
  help=$("$3" --help)
  check_options "$page" "$2 --help" "$help" "$(cat "$scratch/$page.txt")"
}

# The commands listed under "Commands:" in a help text, one per line.
commands_in() { awk '/^Commands:/ { on = 1; next } on && /^$/ { exit } on { print }' <<<"$1"; }

echo "== every page is there"
pages=(rdma-eventd.8 rdma-eventd-slurm.8 rdma-eventctl.1 rdma-eventd.json.5 librdma-eventd.3 rdma-sim.1)
for page in "${pages[@]}"; do
  [ -s "$man_dir/$page" ] || { fail "$man_dir/$page was not built"; continue; }
  render_flat "$page" >"$scratch/$page.txt"
  [ -s "$scratch/$page.txt" ] || fail "man renders nothing for $page"
done
[ "$failures" = 0 ] || exit 1

echo "== rdma-eventd(8): the options of rdma-eventd --help"
page=rdma-eventd.8
check_options "$page" "rdma-eventd --help" "$("$eventd" --help)" "$(cat "$scratch/$page.txt")"

echo "== rdma-eventd-slurm(8): the options of rdma-eventd-slurm --help, every configuration key"
page=rdma-eventd-slurm.8
check_options "$page" "rdma-eventd-slurm --help" "$("$slurm" --help)" "$(cat "$scratch/$page.txt")"
# The keys, from the program's own list (slurm/config.cc: kKeys).
keys=$(sed -n '/kKeys = {/,/};/p' "$source_dir/slurm/config.cc" | grep -oE '"[a-z_]+"' | tr -d '"')
[ -n "$keys" ] || fail "no configuration keys found in slurm/config.cc"
for key in $keys; do
  has "$(cat "$scratch/$page.txt")" "$key" || fail "$page: the key $key is not documented"
done

echo "== rdma-eventctl(1): its options, every command, and each command's options"
check_program rdma-eventctl.1 rdma-eventctl "$eventctl"
commands=$(commands_in "$help" | awk '{ print $1 }')
[ -n "$commands" ] || fail "no commands found in rdma-eventctl --help"
for command in $commands; do
  check_command "$page" "$command" "rdma-eventctl $command --help" "$eventctl" "$command" --help
done

echo "== rdma-sim(1): its options, every command, and each command's options"
check_program rdma-sim.1 rdma-sim "$sim"
listed=0
while read -r first second _; do
  listed=$((listed + 1))
  # A command is one word ("lid") or two ("port down"): the one rdma-sim help knows. `help`
  # itself has no help of its own.
  if [ "$first" = help ]; then
    command=help
  elif command_help=$("$sim" help "$first" 2>/dev/null); then
    command=$first
  elif command_help=$("$sim" help "$first" "$second" 2>/dev/null); then
    command="$first $second"
  else
    fail "rdma-sim help knows no command '$first' nor '$first $second'"
    continue
  fi
  check_command "$page" "$command" "rdma-sim help $command" printf '%s\n' "${command_help:-}"
done < <(commands_in "$help")
[ "$listed" -gt 0 ] || fail "no commands found in rdma-sim --help"

echo "== rdma-eventd.json(5): every key of the shipped configuration"
page=rdma-eventd.json.5
text=$(cat "$scratch/$page.txt")
# An object whose keys are names the user picks from a list (severity.EVENT) is documented
# as such, with each name listed: then each name is looked for alone.
# An array of objects (link_health.bit_errors) has its entries' keys documented once, without
# the index: link_health.bit_errors.ber.
keys=$(jq -r 'paths(type != "object") | map(tostring) | join(".")' \
  "$source_dir/config/rdma-eventd.json" | grep -v '\.[0-9][0-9]*$' |
  sed -E 's/\.[0-9]+\././g' | sort -u)
[ -n "$keys" ] || fail "no keys read from config/rdma-eventd.json"
for key in $keys; do
  parent=${key%.*}
  placeholder="(^|[^[:alnum:]_.])${parent}\.[A-Z]+([^[:alnum:]_]|$)"
  if [ "$parent" != "$key" ] && grep -qE "$placeholder" <<<"$text"; then
    has "$text" "${key##*.}" || fail "$page: ${key##*.} (a name of $parent.${key##*.}) is missing"
  else
    has "$text" "$key" || fail "$page: the key $key is not documented"
  fi
done

echo "== librdma-eventd(3): every function, status and kind of client.h"
page=librdma-eventd.3
text=$(cat "$scratch/$page.txt")
names=$(grep -oE '\b(rdmaev_[a-z_]+|RDMAEV_[A-Z_]+)\b' \
  "$source_dir/lib/include/rdma_eventd/client.h" | grep -v '^RDMAEV_$' | sort -u)
[ -n "$names" ] || fail "no names read from client.h"
for name in $names; do
  # struct tags (rdmaev_client) and functions alike must be named in the page.
  has "$text" "$name" || fail "$page: $name is not documented"
done

echo "== man renders every page without a warning"
for page in "${pages[@]}"; do
  # As the page's readers run it, and as lintian checks it (groff-message).
  MANWIDTH=80 man --warnings -l "$man_dir/$page" >/dev/null 2>"$scratch/warnings" ||
    fail "man -l $page exited with $?"
  LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$man_dir/$page" \
    >/dev/null 2>>"$scratch/warnings" || fail "man -Tutf8 -l $page exited with $?"
  if [ -s "$scratch/warnings" ]; then
    fail "$page: man printed on stderr:"
    cat "$scratch/warnings" >&2
  fi
done

if [ "$failures" != 0 ]; then
  echo "$failures problem(s)" >&2
  exit 1
fi
echo "PASS"
