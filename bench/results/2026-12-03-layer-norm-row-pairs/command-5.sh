#!/usr/bin/env bash
# Call 5 on the H200: layer_norm's cluster barriers without the GPU-wide membar. Carries
# build/bandjit-pairs (b1ad33d), build/bandjit-finish (the last barrier's arrive relaxed),
# build/bandjit (+ the reductions' arrive after a release fence restricted to the block's
# own shared memory) and build/tests/bandjit_gpu_tests (the latter's code). `bench` of the
# H = 65536 rows, three binaries alternating, two rounds; `check` of them under each new
# binary; then, for build/bandjit, GPU tests [layer_norm]. (Kernels without a cluster are
# byte-identical across the three binaries: their cluster code compiles away.)
d=bench/results/2026-12-03-layer-norm-row-pairs
o=$OUT/c5; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c5.tgz -C $OUT c5; }
export BANDJIT_SOURCE_DIR=$PWD
C=$(mktemp -d)
for run in 1 2; do
  for b in bandjit-pairs bandjit-finish bandjit; do
    BANDJIT_CACHE_DIR=$C/$b timeout 60 build/$b bench --runs 30 --shapes $d/ln-65536.json --json $o/bench-$b-$run.json > $o/bench-$b-$run.txt 2>&1
  done
  pack bench-$run
done
for b in bandjit-finish bandjit; do
  BANDJIT_CACHE_DIR=$C/$b timeout 60 build/$b check --timing-runs 1 --shapes $d/ln-65536.json --json $o/check-65536-$b.json > $o/check-65536-$b.txt 2>&1
  echo "exit $?" >> $o/check-65536-$b.txt; pack check-$b
done
export BANDJIT_CACHE_DIR=$C/bandjit
timeout 100 build/tests/bandjit_gpu_tests "[layer_norm]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack gpu-tests
pack done
