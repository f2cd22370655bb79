#!/usr/bin/env bash
# One call on the H200 (carry build/bandjit, build/bandjit-old, build/tests/bandjit_gpu_tests):
#  build/bandjit-old: commit b4ea674 (the row's (M, S) by a chain of combine()s, two dependent
#  exp2 each); build/bandjit: the same with block_row_stats (maximum by shuffles, then sums
#  rescaled to it and added) in the softmax forward and its cluster step.
#  1. `bench` of forward.json (bench/shapes/issue-7-softmax.json, forward only): old, new, old, new (the
#     second pair tells the run-to-run noise);
#  2. scripts/gpu-record OUT/rec rows with the new binary (GPU tests, check, bench beside PyTorch).
o=$OUT/reduction; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/reduction.tgz -C $OUT reduction; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CACHE_DIR=$(mktemp -d)
F=bench/results/2026-12-03-softmax-reduction/forward.json
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $o/gpu.txt
for b in bandjit-old bandjit; do
  BANDJIT_CACHE_DIR=$BANDJIT_CACHE_DIR-$b timeout 90 build/$b pregenerate -j 16 --shapes $F \
    > $o/pregenerate-$b.txt 2>&1
done
pack pregenerate
for run in 1 2; do
  for b in bandjit-old bandjit; do
    BANDJIT_CACHE_DIR=$BANDJIT_CACHE_DIR-$b timeout 90 build/$b bench --shapes $F \
      --json $o/bench-$b-$run.json > $o/bench-$b-$run.txt 2>&1
    echo "exit $?" >> $o/bench-$b-$run.txt; pack bench-$b-$run
  done
done
STEP_LIMIT=200 scripts/gpu-record $o/rec rows > $o/gpu-record.txt 2>&1
pack rec
rm -rf $o/rec.tgz
pack final
