#!/usr/bin/env bash
# The Grafana dashboard's queries (config/grafana/rdma-eventd.json, docs/metrics.md):
#
#   grafana_dashboard.sh queries DASHBOARD NAME=VALUE...
#       every panel query, one JSON object a line: {"panel": title, "ref": refId, "expr": ...},
#       with the dashboard's variables ($NAME or ${NAME}) set to the VALUEs given; fails when a
#       query uses a variable that is not given. The system test runs them in Prometheus.
#   grafana_dashboard.sh variables DASHBOARD
#       every query variable, one JSON object a line: {"name", "metric", "label"}, from its
#       label_values(METRIC, LABEL).
#   grafana_dashboard.sh check DASHBOARD
#       ctest unit.grafana_dashboard_queries: every panel query and variable's metric selector
#       is valid PromQL, as promtool checks recording rules in a throwaway rules file; and
#       promtool rejects the same file with one query broken, so the check is known to bite.
#
# Needs jq and promtool (Debian's prometheus package); without them it fails, naming them.
set -euo pipefail

usage() { echo "usage: grafana_dashboard.sh queries|variables|check DASHBOARD [NAME=VALUE...]" >&2; exit 64; }
[ $# -ge 2 ] || usage
command=$1 dashboard=$2
shift 2
for tool in jq promtool; do
  command -v "$tool" >/dev/null || {
    echo "grafana_dashboard.sh: $tool is not installed (jq; promtool: Debian's prometheus; scripts/bootstrap.sh deps)" >&2
    exit 1
  }
done
[ -r "$dashboard" ] || { echo "grafana_dashboard.sh: cannot read $dashboard" >&2; exit 1; }

# queries NAME=VALUE...: the panel queries with the variables set.
queries() {
  local values='{}' pair
  for pair in "$@"; do
    values=$(jq -c --arg n "${pair%%=*}" --arg v "${pair#*=}" '. + {($n): $v}' <<<"$values")
  done
  # A variable is $name or ${name}, not followed by more of a name ($jobs is not $job).
  jq -c --argjson values "$values" '
    def variables: [scan("\\$\\{?([A-Za-z_][A-Za-z0-9_]*)") | .[0]] | unique;
    .panels[] as $p | $p.targets[] |
    (.expr | variables - ($values | keys)) as $unset |
    if $unset != [] then error("panel \($p.title): \(.refId): no value for $\($unset | join(", $"))")
    else {panel: $p.title, ref: .refId,
          expr: (reduce ($values | to_entries[]) as $v (.expr;
                   gsub("\\$(\\{" + $v.key + "\\}|" + $v.key + "(?![A-Za-z0-9_]))"; $v.value)))}
    end' "$dashboard"
}

# variables: the query variables' label_values(METRIC, LABEL).
variables() {
  jq -c '.templating.list[] | select(.type == "query") |
    (.query | capture("^label_values\\((?<metric>.*), *(?<label>[A-Za-z_][A-Za-z0-9_]*)\\)$")
     // error("variable \(.name): not label_values(METRIC, LABEL): \(.query)")) as $q |
    {name, metric: $q.metric, label: $q.label}' "$dashboard"
}

# rules_file FILE [BREAK]: the queries and the variables' selectors as recording rules (the
# variables set to any value); BREAK: the first query with a stray ")" appended.
rules_file() {
  local values=() name
  for name in $(jq -r '.templating.list[].name' "$dashboard"); do values+=("$name=x"); done
  {
    echo "groups:"
    echo "  - name: grafana_dashboard"
    echo "    rules:"
    { queries "${values[@]}" | jq -c '.expr'
      variables | jq -c '.metric' | jq -c --arg x x 'gsub("\\$\\{?[A-Za-z_][A-Za-z0-9_]*\\}?"; $x)'
    } | jq -r --arg broken "${2:-}" -s '
      to_entries[] |
      "      - record: grafana_dashboard_query_\(.key)\n        expr: \(
         if .key == 0 and $broken != "" then .value + ")" else .value end | tojson)"'
  } >"$1"
}

case "$command" in
  queries) queries "$@" ;;
  variables) variables ;;
  check)
    scratch=$(mktemp -d)
    trap 'rm -rf "$scratch"' EXIT
    mapfile -t values < <(jq -r '.templating.list[].name + "=x"' "$dashboard")
    count=$(queries "${values[@]}" | wc -l)
    [ "$count" -gt 0 ] || { echo "grafana_dashboard.sh: no panel query in $dashboard" >&2; exit 1; }
    rules_file "$scratch/broken.rules.yml" break
    if promtool check rules "$scratch/broken.rules.yml" >"$scratch/broken.log" 2>&1; then
      echo "grafana_dashboard.sh: promtool accepted a broken query: the check would not catch one" >&2
      cat "$scratch/broken.rules.yml" >&2
      exit 1
    fi
    rules_file "$scratch/dashboard.rules.yml"
    if ! promtool check rules "$scratch/dashboard.rules.yml"; then
      echo "grafana_dashboard.sh: a query of $dashboard is not valid PromQL:" >&2
      cat "$scratch/dashboard.rules.yml" >&2
      exit 1
    fi
    echo "grafana_dashboard.sh: $count panel queries valid"
    ;;
  *) usage ;;
esac
