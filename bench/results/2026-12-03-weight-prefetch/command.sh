#!/usr/bin/env bash
# One call on the H200 (carry build): the layer_norm forward with weight and bias prefetched
# to the L1 (BANDJIT_ROW_WEIGHT_PREFETCH=2: between the cluster barrier's arrive and wait;
# 3: right after the row's loads) against the default, two rounds in alternating order.
d=bench/results/2026-12-03-weight-prefetch
o=$OUT/c1; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c1.tgz -C $OUT c1; }
export BANDJIT_SOURCE_DIR=$PWD
scripts/sweep-rows $o/r1 $d/forward.json default BANDJIT_ROW_WEIGHT_PREFETCH=2 BANDJIT_ROW_WEIGHT_PREFETCH=3 > $o/r1.txt 2>&1; pack r1
scripts/sweep-rows $o/r2 $d/forward.json BANDJIT_ROW_WEIGHT_PREFETCH=3 BANDJIT_ROW_WEIGHT_PREFETCH=2 default > $o/r2.txt 2>&1; pack r2
pack done
rm -rf $o
