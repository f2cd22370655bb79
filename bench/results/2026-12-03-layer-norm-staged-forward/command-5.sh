#!/usr/bin/env bash
# Call 5 on the H200 (carry build/bandjit-prev = 55907e9, build/bandjit + build/tests/bandjit_gpu_tests
# = 462bd7d: the register forward's statistics in one cluster reduction a row, each block's
# squared deviations about its slice's mean combined as Chan et al.; the staged backward
# kernels sharing ln::StagedRows). `bench` of the H = 65536
# rows, both binaries alternating, two rounds; with the new binary GPU tests [layer_norm],
# `check` of issue 7's layer_norm file and `scripts/bench-rows OUT layer_norm`.
d=bench/results/2026-12-03-layer-norm-staged-forward
o=$OUT/c5; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c5.tgz -C $OUT c5; }
export BANDJIT_SOURCE_DIR=$PWD
C=$(mktemp -d)
for run in 1 2; do
  for b in bandjit-prev bandjit; do
    BANDJIT_CACHE_DIR=$C/$b timeout 60 build/$b bench --runs 30 --shapes $d/ln-65536.json --json $o/ln-$b-$run.json > $o/ln-$b-$run.txt 2>&1
  done
  pack bench-$run
done
export BANDJIT_CACHE_DIR=$C/bandjit
timeout 100 build/tests/bandjit_gpu_tests "[layer_norm]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack gpu-tests
timeout 150 build/bandjit check --timing-runs 1 --shapes bench/shapes/issue-7-layer-norm.json --json $o/check.json > $o/check.txt 2>&1
echo "exit $?" >> $o/check.txt; pack check
timeout 150 scripts/bench-rows $o/bench-rows layer_norm > $o/bench-rows.txt 2>&1; echo "exit $?" >> $o/bench-rows.txt
pack done
rm -rf $o
