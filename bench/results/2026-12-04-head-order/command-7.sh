#!/usr/bin/env bash
# Seventh call (carry build/bandjit-knobs = 75f688d, build/bandjit = f4c0f24): why the row orders and head pairs are slower.
# Nsight Compute (launch statistics, occupancy, speed of light, memory workload) of the
# boolean-masked float16 L = 65536 forward: default, BANDJIT_ROW_HEAD_PAIRS=1,
# BANDJIT_ROW_HEAD_GROUP=32.
d=bench/results/2026-12-04-head-order
o=$OUT/c7; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c7.tgz -C $OUT c7; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CACHE_DIR=/tmp/c7-cache
for s in default BANDJIT_ROW_HEAD_PAIRS=1 BANDJIT_ROW_HEAD_GROUP=32; do
  v=(); [ $s = default ] || v=($s)
  env "${v[@]}" build/bandjit-knobs pregenerate --shapes $d/masked-f16-65536.json > /dev/null 2>&1
  env "${v[@]}" timeout 90 ncu --clock-control none -k bandjit_scale_mask_softmax --launch-skip 3 --launch-count 1 \
    --section LaunchStats --section Occupancy --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,sm__cycles_active.avg,smsp__warps_launched.sum \
    build/bandjit-knobs bench --runs 5 --shapes $d/masked-f16-65536.json > $o/ncu-$(echo $s | tr '=' '-').txt 2>&1
  pack $s
done
rm -rf $o
# Then the float16 H = 65536 layer_norm at 1024, 2048 and 4096 rows with and without weight
# and bias (the current code: build/bandjit = f4c0f24, fcfd80f's kernels): how much of the
# backward's fixed time is its dweight/dbias sums.
o=$OUT/c7b; mkdir -p $o
scripts/sweep-rows $o $d/ln-weights-sizes.json default > $o/sweep.txt 2>&1
tar czf $OUT/c7b.tgz -C $OUT c7b; rm -rf $o
