#!/usr/bin/env bash
# Call 2 on the H200 (carry build/bandjit): the overlapped kernels (templates/layer_norm_overlapped.cuh:
# the next row's first pass before this row's cluster sum). BANDJIT_ROW_STAGED=1 now gives
# the overlapped staged forward (call 1's staged forward is gone); BANDJIT_ROW_OVERLAP=1 the
# overlapped backward. Against the defaults and call 1's best backward settings, on the H = 5120
# (16-bit), 16384 and 65536 rows; `check` (float64) under every setting. Two rounds.
d=bench/results/2026-12-03-layer-norm-staged-forward
o=$OUT/c2; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c2.tgz -C $OUT c2; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
S=BANDJIT_ROW_STAGED=1; OV="$S BANDJIT_ROW_OVERLAP=1"
CHECK_SHAPES=$d/ln-long-5120.json timeout 330 scripts/sweep-rows $o/sweep-1 $d/ln-long-5120.json default "$S" "$OV" \
  "$S BANDJIT_ROW_HELD_ROWS=1" "$OV BANDJIT_ROW_STAGES=4" "$OV BANDJIT_ROW_STAGES=3" "$S BANDJIT_ROW_BLOCK_THREADS=256" \
  "$OV BANDJIT_ROW_STAGES=8" > $o/sweep-1.txt 2>&1
pack sweep-1
timeout 150 scripts/sweep-rows $o/sweep-2 $d/ln-long-5120.json default "$S" "$OV" "$S BANDJIT_ROW_HELD_ROWS=1" \
  "$S BANDJIT_ROW_BLOCK_THREADS=256" > $o/sweep-2.txt 2>&1
pack done
rm -rf $o
