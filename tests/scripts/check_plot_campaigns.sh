#!/usr/bin/env bash
# ctest: scripts/plot_campaigns.py draws ETTR by job size and where the wall
# clock went, per policy, from `clustersim campaign --json` results (a PNG of
# 1560 x 600 pixels), read back from the figure (--data): each point at its
# file's ETTR with its 95% interval, on an axis from 0; each bar's shares
# adding up to 100%, in the file's proportions. It refuses a JSON file that
# is not a result, writing no image.
# Usage: check_plot_campaigns.sh CLUSTERSIM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
clustersim=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python=/usr/bin/python3
source "$here/plot_checks.sh"
for nodes in 4096 12288; do
  for policy in ft_hsdp checkpoint_restart; do
    "$clustersim" campaign "$repo/scenarios/ft_hsdp_98k.yaml" --set cluster.nodes=$nodes \
      --set recovery.policy=$policy --set campaign.trials=10 --json "$out/$nodes.$policy.json" \
      --quiet > /dev/null
  done
done
"$python" "$repo/scripts/plot_campaigns.py" "$out"/*.json -o "$out/c.png" --data "$out/c.data" \
  2> "$out/err" || { cat "$out/err"; exit 1; }
expect_png_size "$out/c.png" 1560 600
grep -q "4 campaigns: 2 job sizes x 2 policies from 4 files" "$out/err" || { cat "$out/err"; exit 1; }
# The result files by (job GPUs, policy), and the one a point or bar was drawn from.
of="{(r['job_gpus'], r['policy']): r for r in map(load, args)}"
expect_drawn "$out/c.data" "len(d['ettr']) == 4 and all(
    close(p['ettr_pct'], 100 * $of[(p['gpus'], p['policy'])]['ettr_mean'])
    and close(p['interval_pct'][0], 100 * $of[(p['gpus'], p['policy'])]['ettr_ci95_low'])
    and close(p['interval_pct'][1], 100 * $of[(p['gpus'], p['policy'])]['ettr_ci95_high'])
    for p in d['ettr'])" \
  "each campaign's ETTR and 95% interval at its file's values" "$out"/*.json
expect_drawn "$out/c.data" "d['ettr_ylim'][0] == 0 and d['share_ylim'] == [0, 100]" "axes from 0"
share="lambda r: 100 * r['breakdown']['productive_s'] / sum(r['breakdown'].values())"
expect_drawn "$out/c.data" "len(d['bars']) == 4 and all(
    close(b['total_pct'], 100)
    and close(b['shares_pct']['productive_s'], ($share)($of[(b['gpus'], b['policy'])]))
    for b in d['bars'])" \
  "bars of 100%, each with its file's productive share" "$out"/*.json
echo '{"ettr": 1}' > "$out/bad.json"
expect_refused "$repo/scripts/plot_campaigns.py" "$out/bad.json" "expected a .clustersim campaign --json. result"
echo ok
