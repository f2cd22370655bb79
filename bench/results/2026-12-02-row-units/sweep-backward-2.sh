#!/usr/bin/env bash
# The 16-bit layer_norm backward rows short of 80 % under column sums in registers and fewer
# pieces a thread (one call on the H200; carry build/bandjit). Units are off in the backward.
o=$OUT/row-units; mkdir -p $o
pack() { tar czf $OUT/row-units.tgz -C $OUT row-units; }
d=bench/results/2026-12-02-row-units
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit BANDJIT_CACHE_DIR=$(mktemp -d)
n=0
for s in "" "BANDJIT_ROW_PIECES=2 BANDJIT_ROW_PREFETCH=1 BANDJIT_ROW_REGISTER_SUMS=1" \
         "BANDJIT_ROW_PIECES=2 BANDJIT_ROW_PREFETCH=1" "BANDJIT_ROW_REGISTER_SUMS=1" \
         "BANDJIT_ROW_REGISTER_SUMS=1 BANDJIT_ROW_PREFETCH=1" \
         "BANDJIT_ROW_PIECES=1 BANDJIT_ROW_PREFETCH=1 BANDJIT_ROW_REGISTER_SUMS=1" \
         "BANDJIT_ROW_PIECES=1 BANDJIT_ROW_REGISTER_SUMS=1" "BANDJIT_ROW_PIECES=1 BANDJIT_ROW_PREFETCH=1" \
         "BANDJIT_ROW_PIECES=1" ""; do
  n=$((n + 1)); echo "$n: $s" >> $o/bwd2-settings.txt
  env $s timeout 90 build/bandjit bench --shapes $d/ln-backward-short.json --json $o/bwd2-$n.json > $o/bwd2-$n.txt 2>&1
  pack
done
rm -rf $o
