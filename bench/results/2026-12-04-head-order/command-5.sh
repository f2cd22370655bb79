#!/usr/bin/env bash
# Fifth call (carry build/bandjit-exp = 09962b1 + mask-traffic.patch): how much of the
# boolean-masked L = 65536 forward's time is its mask traffic. Timing only: with
# BANDJIT_MASK_EXPERIMENT=1 only every other piece's mask bytes are loaded, with 2 none
# (wrong results, so no `check`); unset it is the default kernel. Beside them the unmasked rows.
# Three rounds, the settings in rotated order.
d=bench/results/2026-12-04-head-order
o=$OUT/c5; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c5.tgz -C $OUT c5; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CACHE_DIR=/tmp/c5-cache
for v in 0 1 2; do
  [ $v = 0 ] && unset BANDJIT_MASK_EXPERIMENT || export BANDJIT_MASK_EXPERIMENT=$v
  build/bandjit-exp pregenerate -j 16 --shapes $d/long-forward.json > $o/pregenerate-$v.txt 2>&1
done
for round in 1 2 3; do
  for v in $(echo "0 1 2 0 1 2" | cut -d' ' -f$round-$((round + 2))); do
    [ $v = 0 ] && unset BANDJIT_MASK_EXPERIMENT || export BANDJIT_MASK_EXPERIMENT=$v
    build/bandjit-exp bench --runs 30 --shapes $d/long-forward.json --json $o/bench-$v-r$round.json > $o/bench-$v-r$round.txt 2>&1
  done
  pack r$round
done
rm -rf $o
