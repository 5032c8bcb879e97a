#!/usr/bin/env bash
# The kit's PrometheusRule with the real promtool (built from the Prometheus Go module by
# test/cluster/build.sh): its spec, extracted as the Prometheus Operator writes it into a rule file,
# passes `promtool check rules`, and every alert passes its `promtool test rules` cases
# (rules-test.yaml: each fires on the series that mean it, stays silent on its healthy
# neighbours). The dashboard is valid JSON with a query in every panel (monitoring.kit runs each
# against a live Prometheus).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/test/cluster/paths.sh"
promtool=$KVC_PROMETHEUS_BIN/promtool
[ -x "$promtool" ] || { echo "FAIL: promtool is not built ($promtool): run test/cluster/build.sh prometheus (scripts/setup.sh does)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$root/deploy/monitoring/rules.yaml" "$work/kvcache-rules.yaml" <<'PY'
import sys, yaml
rule = yaml.safe_load(open(sys.argv[1]))
assert rule["kind"] == "PrometheusRule", rule["kind"]
yaml.safe_dump(rule["spec"], open(sys.argv[2], "w"), sort_keys=False)
PY
cp "$here/rules-test.yaml" "$work/"
"$promtool" check rules "$work/kvcache-rules.yaml"
(cd "$work" && "$promtool" test rules rules-test.yaml)

# Every alert of the rule file has a test case that expects it to fire.
missing=$(comm -23 <(grep -o 'alert: [A-Za-z]*' "$work/kvcache-rules.yaml" | cut -d' ' -f2 | sort -u) \
                   <(grep -o 'alertname: [A-Za-z]*' "$here/rules-test.yaml" | cut -d' ' -f2 | sort -u))
[ -z "$missing" ] || { echo "FAIL: alerts without a promtool test case: $missing"; exit 1; }
echo "every alert has a promtool test case"

# The dashboard: JSON, a uid, and each panel's queries present.
python3 - "$root/deploy/monitoring/dashboards/kvcache-operator.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["uid"] == "kvcache-operator"
queries = [t["expr"] for p in d["panels"] if p["type"] != "row" for t in p["targets"]]
assert queries and all(q.strip() for q in queries)
print(f"dashboard: {len(queries)} queries in {sum(p['type'] != 'row' for p in d['panels'])} panels")
PY
