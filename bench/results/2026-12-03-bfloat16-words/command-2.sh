#!/usr/bin/env bash
# Call 2 on the H200 (carry build/bandjit-prev = b2ff0bd, build/bandjit-words = the first
# commit (elements<T>, without the reverted kernels), build/bandjit + build/tests/bandjit_gpu_tests
# = that commit + the 16-bit FMA forms of x̂, y and dx). `bench` of issue 7's 16-bit rows,
# the three binaries in turn (rows16.json, then long16.json); with build/bandjit GPU tests
# [layer_norm],[softmax],[band_softmax],[band_softmax_backward] and `check` of issue 7's
# layer_norm file.
d=bench/results/2026-12-03-bfloat16-words
o=$OUT/c2; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c2.tgz -C $OUT c2; }
export BANDJIT_SOURCE_DIR=$PWD
C=$(mktemp -d)
bins="bandjit-prev bandjit-words bandjit"
for b in $bins; do
  BANDJIT_CACHE_DIR=$C/$b build/$b pregenerate -j 16 --shapes $d/rows16.json > $o/pregenerate-$b.txt 2>&1
done
pack pregenerate
for run in 1 2; do
  f=$d/rows16.json; [ $run = 2 ] && f=$d/long16.json
  for b in $bins; do
    BANDJIT_CACHE_DIR=$C/$b timeout 100 build/$b bench --runs 30 --shapes $f --json $o/bench-$b-$run.json > $o/bench-$b-$run.txt 2>&1
  done
  pack bench-$run
done
export BANDJIT_CACHE_DIR=$C/bandjit
timeout 120 build/tests/bandjit_gpu_tests "[layer_norm],[softmax]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack gpu-tests
timeout 150 build/tests/bandjit_gpu_tests "[band_softmax],[band_softmax_backward]" > $o/gpu-tests-band.txt 2>&1; echo "exit $?" >> $o/gpu-tests-band.txt; pack gpu-tests-band
timeout 100 build/bandjit check --timing-runs 1 --shapes bench/shapes/issue-7-layer-norm.json --json $o/check-ln.json > $o/check-ln.txt 2>&1
echo "exit $?" >> $o/check-ln.txt; pack check-ln
pack done
rm -rf $o
