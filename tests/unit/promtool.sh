#!/usr/bin/env bash
# ctest unit.prometheus_rules_*: promtool with the arguments given, found when the test runs.
# Without promtool the test fails (it is in Debian's prometheus package: scripts/bootstrap.sh
# deps), so that the alert rules are never left unchecked unnoticed.
#
#   tests/unit/promtool.sh ARGS...
set -euo pipefail
if ! command -v promtool >/dev/null; then
  echo "promtool.sh: promtool is not installed: the alert rules cannot be checked (apt-get install prometheus, or scripts/bootstrap.sh deps)" >&2
  exit 1
fi
exec promtool "$@"
