#!/usr/bin/env bash
# Call 2 (carry build/bandjit, build/smid-placement: the working tree after 73a22e9 with
# BANDJIT_ROW_WIDE_CLUSTER and the runtime's non-portable cluster attribute): where the
# H200 puts clusters of 4 and 16; issue 7's layer_norm forwards at H = 65536 in clusters of
# 16 blocks of 128 threads (4096 columns a block) against the default, two rounds in
# opposite order, with `check` of the H = 65536 forwards under the two cluster-16 layouts.
d=bench/results/2026-12-04-sm-slices
o=$OUT/c2; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c2.tgz -C $OUT c2; }
export BANDJIT_CACHE_DIR=/tmp/c2-cache
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
build/smid-placement > $o/smid-placement.txt 2>&1; pack placement
w="BANDJIT_ROW_WIDE_CLUSTER=1 BANDJIT_ROW_BLOCK_THREADS=128 BANDJIT_ROW_REGISTERS=16"
s=("default" "$w BANDJIT_ROW_VEC_BYTES=8 BANDJIT_ROW_WEIGHT_AHEAD=1" "$w BANDJIT_ROW_VEC_BYTES=8" "$w")
CHECK_SHAPES=$d/ln-check.json scripts/sweep-rows $o/r1 $d/ln-65536.json "${s[@]}" > $o/r1.txt 2>&1; pack r1
scripts/sweep-rows $o/r2 $d/ln-65536.json "${s[3]}" "${s[2]}" "${s[1]}" "${s[0]}" > $o/r2.txt 2>&1; pack done
rm -rf $o
