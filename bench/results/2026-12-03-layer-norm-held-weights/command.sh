#!/usr/bin/env bash
# One call on the H200 (carry build/bandjit): layer_norm_backward's register kernel with each
# thread's weights held in registers for all its rows (BANDJIT_ROW_HOLD_WEIGHTS=1) against the
# default (weights read twice a row from the L1), on issue 7's whole layer_norm file, two rounds
# each, alternating; then `check` of that file with the knob on.
o=$OUT/hw; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/hw.tgz -C $OUT hw; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CACHE_DIR=$(mktemp -d)
F=bench/shapes/issue-7-layer-norm.json
for run in 1 2; do
  for s in default BANDJIT_ROW_HOLD_WEIGHTS=1; do
    vars=(); [ "$s" = default ] || vars=("$s")
    env "${vars[@]}" timeout 100 build/bandjit bench --runs 30 --shapes $F --json $o/bench-$s-$run.json > $o/bench-$s-$run.txt 2>&1
    pack bench-$s-$run
  done
done
BANDJIT_ROW_HOLD_WEIGHTS=1 timeout 150 build/bandjit check --timing-runs 1 --shapes $F --json $o/check-hold.json > $o/check-hold.txt 2>&1
echo "exit $?" >> $o/check-hold.txt
pack done
rm -rf $o
