#!/usr/bin/env bash
# Softmax units again, with 8 threads a unit (BANDJIT_ROW_PIECES=4: 4 pieces of 16 bytes a
# thread, half the threads a row of the one-row layout), which is how layer_norm's units
# gained; the units' default layout (16 threads × 2 pieces) had as many threads a row as
# one row a unit. Binary: commit 23deec4's change re-applied on f0ac0c5 (`git revert
# --no-commit f825a1a`, built as .scratch/bandjit-units; carry it). One call on the H200.
o=$OUT/ab-r8; mkdir -p $o
d=bench/results/2026-12-02-row-units
b=.scratch/bandjit-units
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/$b BANDJIT_CACHE_DIR=$(mktemp -d)
n=0
for s in "BANDJIT_ROW_BUNDLE=0" "" "BANDJIT_ROW_PIECES=4" "BANDJIT_ROW_BUNDLE=0" "BANDJIT_ROW_PIECES=4"; do
  n=$((n + 1)); echo "$n: $s" >> $o/settings.txt
  env $s timeout 60 $b bench --shapes $d/sm-100.json --json $o/sm100-$n.json > $o/sm100-$n.txt 2>&1
done
tar czf $OUT/ab-r8.tgz -C $OUT ab-r8; rm -rf $o
