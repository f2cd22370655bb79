#!/usr/bin/env bash
# One call (carry build/bandjit at 74a52de and .scratch/bits/harness, built by prepass/build.sh):
# 1. the prepass harness (mask bits by a first kernel, with and without programmatic
#    dependent launch); 2. the 16-bit layer_norm forwards at H = 65536 under block sizes and
#    weight rings (existing knobs), then `check` of the settings' kernels.
d=bench/results/2026-12-04-prepass-and-ring-blocks
o=$OUT/c1; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c1.tgz -C $OUT c1; }
export BANDJIT_CACHE_DIR=/tmp/c1-cache
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
timeout 60 .scratch/bits/harness > $o/harness.txt 2>&1; echo "exit $?" >> $o/harness.txt; pack harness
s=("default" "BANDJIT_ROW_WEIGHT_RING=3" "BANDJIT_ROW_WEIGHT_RING=5"
   "BANDJIT_ROW_BLOCK_THREADS=512" "BANDJIT_ROW_BLOCK_THREADS=512 BANDJIT_ROW_WEIGHT_RING=3"
   "BANDJIT_ROW_BLOCK_THREADS=512 BANDJIT_ROW_WEIGHT_RING=5"
   "BANDJIT_ROW_BLOCK_THREADS=512 BANDJIT_ROW_VEC_BYTES=8" "BANDJIT_ROW_BLOCK_THREADS=512 BANDJIT_ROW_VEC_BYTES=8 BANDJIT_ROW_WEIGHT_RING=3"
   "BANDJIT_ROW_BLOCK_THREADS=512 BANDJIT_ROW_VEC_BYTES=8 BANDJIT_ROW_WEIGHT_RING=5"
   "BANDJIT_ROW_BLOCK_THREADS=1024" "BANDJIT_ROW_BLOCK_THREADS=1024 BANDJIT_ROW_WEIGHT_RING=3"
   "BANDJIT_ROW_BLOCK_THREADS=1024 BANDJIT_ROW_VEC_BYTES=8 BANDJIT_ROW_WEIGHT_RING=3")
CHECK_SHAPES=$d/ln-16bit-65536.json timeout 400 scripts/sweep-rows $o/r1 $d/ln-16bit-65536.json "${s[@]}" > $o/r1.txt 2>&1; pack r1
timeout 60 scripts/sweep-rows $o/r2 $d/ln-16bit-65536.json default > $o/r2.txt 2>&1
pack done
rm -rf $o
