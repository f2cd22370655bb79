#!/usr/bin/env bash
# Call 4 on the H200 (carry build/bandjit, commit b1ad33d): where the float16 H = 65536
# forward's time goes, with weight and bias and without: Nsight Compute's warp states,
# scheduler and source counters (stall reasons by SASS line), one launch each.
d=bench/results/2026-12-03-layer-norm-row-pairs
o=$OUT/c4; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c4.tgz -C $OUT c4; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CACHE_DIR=$(mktemp -d)
for s in ln-f16-65536 ln-f16-65536-plain; do
  timeout 120 ncu --clock-control none -k bandjit_layer_norm --launch-skip 3 --launch-count 1 --section SpeedOfLight \
    --section WarpStateStats --section SchedulerStats --section SourceCounters --section MemoryWorkloadAnalysis \
    --print-details all build/bandjit bench --runs 5 --shapes $d/$s.json > $o/ncu-$s.txt 2>&1; pack $s
done
pack done
