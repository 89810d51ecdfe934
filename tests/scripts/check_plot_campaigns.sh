#!/usr/bin/env bash
# ctest: scripts/plot_campaigns.py draws ETTR by job size and where the wall
# clock went, per policy, from `clustersim campaign --json` results (a PNG of
# 1560 x 600 pixels), and refuses a JSON file that is not one, writing no
# image.
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
"$python" "$repo/scripts/plot_campaigns.py" "$out"/*.json -o "$out/c.png"
expect_png_size "$out/c.png" 1560 600
echo '{"ettr": 1}' > "$out/bad.json"
expect_refused "$repo/scripts/plot_campaigns.py" "$out/bad.json" "expected a .clustersim campaign --json. result"
echo ok
