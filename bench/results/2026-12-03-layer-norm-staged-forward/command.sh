#!/usr/bin/env bash
# Call 1 on the H200 (carry build/bandjit): the staged forward (BANDJIT_ROW_STAGED=1: x through
# shared memory by bulk copies, weights and bias in registers for all a block's rows) and the
# staged backward's held rows (BANDJIT_ROW_HELD_ROWS=1: each stage refilled right after the
# block's reduction), against the defaults on the H = 16384 and 65536 rows of every dtype;
# `check` (float64 reference) of those rows under every setting. Two rounds.
d=bench/results/2026-12-03-layer-norm-staged-forward
o=$OUT/c1; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c1.tgz -C $OUT c1; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
S=BANDJIT_ROW_STAGED=1; HR="$S BANDJIT_ROW_HELD_ROWS=1"
CHECK_SHAPES=$d/ln-long.json timeout 300 scripts/sweep-rows $o/sweep-1 $d/ln-long.json default "$S" "$HR" \
  "$HR BANDJIT_ROW_STAGES=4" "$HR BANDJIT_ROW_STAGES=3" "$S BANDJIT_ROW_BLOCK_THREADS=256" \
  "$HR BANDJIT_ROW_STAGES=8" "$S BANDJIT_ROW_STAGES=4" > $o/sweep-1.txt 2>&1
pack sweep-1
timeout 120 scripts/sweep-rows $o/sweep-2 $d/ln-long.json default "$S" "$HR" "$HR BANDJIT_ROW_STAGES=4" \
  "$S BANDJIT_ROW_BLOCK_THREADS=256" > $o/sweep-2.txt 2>&1
pack done
rm -rf $o
