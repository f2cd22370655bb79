#!/usr/bin/env bash
# Call 2 on the H200 (carry build/bandjit, build/bandjit-head, build/tests/bandjit_gpu_tests):
# build/bandjit: the shared weights taken out, the staged backward's mean/rstd from lanes only
# without a cluster. 1. staged rows against aac1b7b (bandjit-head), two rounds; 2. 16-bit
# H = 100 backward layouts (register column sums, fewer pieces a thread); 3. GPU tests
# [layer_norm], `check` of issue 7's layer_norm file, `bench` beside PyTorch (scripts/bench-rows).
d=bench/results/2026-12-03-layer-norm-shared-weights
o=$OUT/c2; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c2.tgz -C $OUT c2; }
export BANDJIT_SOURCE_DIR=$PWD
C=$(mktemp -d)
for run in 1 2; do
  for b in bandjit-head bandjit; do
    BANDJIT_CACHE_DIR=$C/$b timeout 60 build/$b bench --runs 30 --shapes $d/ln-staged-rows.json --json $o/staged-$b-$run.json > $o/staged-$b-$run.txt 2>&1
    pack staged-$b-$run
  done
done
BANDJIT_CACHE_DIR=$C/sweep timeout 150 scripts/sweep-rows $o/sweep-100 $d/ln-100.json default \
  "BANDJIT_ROW_PIECES=8 BANDJIT_ROW_PREFETCH=1" \
  "BANDJIT_ROW_PIECES=2 BANDJIT_ROW_PREFETCH=1 BANDJIT_ROW_REGISTER_SUMS=1" \
  "BANDJIT_ROW_PIECES=2 BANDJIT_ROW_REGISTER_SUMS=1" "BANDJIT_ROW_PIECES=2 BANDJIT_ROW_PREFETCH=1" \
  "BANDJIT_ROW_PIECES=1 BANDJIT_ROW_PREFETCH=1 BANDJIT_ROW_REGISTER_SUMS=1" \
  "BANDJIT_ROW_PIECES=8 BANDJIT_ROW_PREFETCH=1 BANDJIT_ROW_BLOCK_THREADS=512" > $o/sweep-100.txt 2>&1
pack sweep-100
export BANDJIT_CACHE_DIR=$C/rec
timeout 150 build/tests/bandjit_gpu_tests "[layer_norm]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack gpu-tests
timeout 150 build/bandjit check --timing-runs 1 --shapes bench/shapes/issue-7-layer-norm.json --json $o/check.json > $o/check.txt 2>&1
echo "exit $?" >> $o/check.txt; pack check
timeout 150 scripts/bench-rows $o/bench-rows layer_norm > $o/bench-rows.txt 2>&1; echo "exit $?" >> $o/bench-rows.txt
pack done
rm -rf $o
