#!/usr/bin/env bash
# Records what the CLI prints for every sample scenario, or checks that a
# build prints the same: a refactor of the cost model must leave every byte
# of `evaluate --json`, `evaluate`, `trace` and `optimize --json` as it was
# (the optimizer's timings aside).
#
#   tools/compare-outputs.sh record BIN DIR   # write the outputs of BIN into DIR
#   tools/compare-outputs.sh check  BIN DIR   # compare BIN's outputs with DIR; exit 1 on a difference
#
# BIN is a `scaleacross` executable (e.g. build/release/app/scaleacross).
set -euo pipefail
cd "$(dirname "$0")/.."
if (($# != 3)) || [[ $1 != record && $1 != check ]]; then
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
mode=$1
bin=$(realpath "$2")
dir=$3
if [[ $mode == check ]]; then
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
else
  out=$dir
  rm -rf "$out"
fi
mkdir -p "$out"

# The optimizer's run-dependent figures: wall-clock times and rates.
strip_timings() {
  python3 -c '
import json, sys
d = json.load(sys.stdin)
for k in ("elapsed_s", "search_s", "evaluations_per_s"):
    d.pop(k, None)
json.dump(d, sys.stdout, indent=1, sort_keys=True)
print()'
}

for s in sample_clusters/scenarios/*.json; do
  n=$(basename "$s" .json)
  "$bin" evaluate "$s" --json >"$out/$n.evaluate.json"
  "$bin" evaluate "$s" >"$out/$n.evaluate.txt"
  "$bin" evaluate "$s" --balance-layers --json >"$out/$n.balanced.json"
  "$bin" trace "$s" -o "$out/$n.trace.json" >/dev/null
  "$bin" optimize "$s" --json --threads 2 | strip_timings >"$out/$n.optimize.json"
  "$bin" sweep "$s" --vary plan.zero_stage=0,1,2,3 --vary plan.micro_batch_sequences=1,2 \
    --json >"$out/$n.sweep-zero.json"
done
"$bin" sweep sample_clusters/scenarios/three-buildings-405b.json \
  --vary links.B1-B3.bandwidth_gbps=100:100000:log10:7 --vary links.B1-B3.latency_ms=1,10,40 \
  --json >"$out/three-buildings-405b.sweep-link.json"
# Every plan against its cluster and model, as files.
"$bin" evaluate --cluster sample_clusters/clusters/hetero-pair.json \
  --model sample_clusters/models/llama3-70b.json \
  --plan sample_clusters/plans/llama3-70b-hetero.json --balance-layers --json \
  >"$out/hetero-files.evaluate.json"
# The validation runs (tests/validation and, where present, shared/validation).
python3 - "$bin" "$out" tests/validation ../shared/validation/published-runs-2 <<'EOF'
import json, subprocess, sys, os
bin, out, dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
for d in dirs:
    if not os.path.isfile(os.path.join(d, "runs.json")):
        continue
    for r in json.load(open(os.path.join(d, "runs.json"))).get("runs", []):
        args = [bin, "evaluate", "--json"]
        for key, sub in (("cluster", "clusters"), ("model", "models"), ("plan", "plans")):
            f = os.path.join(d, r[key])
            if not os.path.isfile(f):
                f = os.path.join(d, sub, r[key])
            args += ["--" + key, f]
        p = subprocess.run(args, capture_output=True, text=True)
        with open(os.path.join(out, "validation-" + r["id"] + ".json"), "w") as o:
            o.write(p.stdout + p.stderr)
EOF

if [[ $mode == check ]]; then
  if diff -r "$dir" "$out" >/dev/null; then
    echo "identical: $(ls "$out" | wc -l) outputs"
  else
    diff -r "$dir" "$out" | head -40
    echo "DIFFERENT (first lines above)"
    exit 1
  fi
else
  echo "recorded $(ls "$out" | wc -l) outputs in $out"
fi
