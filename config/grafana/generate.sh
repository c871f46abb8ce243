#!/usr/bin/env bash
# Formats rdma-eventd.jsonnet, the Grafana dashboard's source (jsonnetfmt), and writes
# rdma-eventd.json from it (jsonnet; both in Debian's jsonnet package). With --check, writes
# nothing and fails when the source is not formatted or the committed rdma-eventd.json is not
# what the source generates (ctest unit.grafana_dashboard_generated).
#
#   config/grafana/generate.sh [--check]
set -euo pipefail
dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source=$dir/rdma-eventd.jsonnet
json=$dir/rdma-eventd.json

if ! command -v jsonnet >/dev/null || ! command -v jsonnetfmt >/dev/null; then
  echo "generate.sh: jsonnet is not installed: the dashboard cannot be generated (apt-get install jsonnet, or scripts/bootstrap.sh deps)" >&2
  exit 1
fi
case "${1:-}" in
  "")
    jsonnetfmt -i "$source"
    generated=$(jsonnet "$source")
    printf '%s\n' "$generated" >"$json"
    ;;
  --check)
    if ! jsonnetfmt --test "$source"; then
      echo "generate.sh: $source is not formatted as jsonnetfmt formats it: run config/grafana/generate.sh" >&2
      exit 1
    fi
    generated=$(jsonnet "$source")
    if ! diff -u --label "$json (committed)" --label "$source (generated)" \
      "$json" <(printf '%s\n' "$generated"); then
      echo "generate.sh: $json is not what $source generates: run config/grafana/generate.sh and commit the result" >&2
      exit 1
    fi
    ;;
  *)
    echo "usage: generate.sh [--check]" >&2
    exit 64
    ;;
esac
