#!/usr/bin/env bash
# One call on the H200 (carry build/bandjit-prev = b2ff0bd, build/bandjit +
# build/tests/bandjit_gpu_tests = this change: 16-bit elements read through
# elements<T>(raw), bfloat16 by 32-bit words). `bench` of issue 7's 16-bit rows, both
# binaries in turn (rows16.json once, long16.json a second time); then with the new binary
# GPU tests [layer_norm],[softmax],[band_softmax], `check` of issue 7's two files and
# `scripts/bench-rows` of both sets beside PyTorch.
d=bench/results/2026-12-03-bfloat16-words
o=$OUT/c1; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c1.tgz -C $OUT c1; }
export BANDJIT_SOURCE_DIR=$PWD
C=$(mktemp -d)
for b in bandjit-prev bandjit; do
  BANDJIT_CACHE_DIR=$C/$b build/$b pregenerate -j 16 --shapes $d/rows16.json > $o/pregenerate-$b.txt 2>&1
done
pack pregenerate
for run in 1 2; do
  f=$d/rows16.json; [ $run = 2 ] && f=$d/long16.json
  for b in bandjit-prev bandjit; do
    BANDJIT_CACHE_DIR=$C/$b timeout 100 build/$b bench --runs 30 --shapes $f --json $o/bench-$b-$run.json > $o/bench-$b-$run.txt 2>&1
  done
  pack bench-$run
done
export BANDJIT_CACHE_DIR=$C/bandjit
timeout 120 build/tests/bandjit_gpu_tests "[layer_norm],[softmax]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack gpu-tests
timeout 60 build/tests/bandjit_gpu_tests "[band_softmax]" > $o/gpu-tests-band.txt 2>&1; echo "exit $?" >> $o/gpu-tests-band.txt; pack gpu-tests-band
timeout 150 build/bandjit check --timing-runs 1 --shapes bench/shapes/issue-7-layer-norm.json bench/shapes/issue-7-softmax.json --json $o/check.json > $o/check.txt 2>&1
echo "exit $?" >> $o/check.txt; pack check
for s in layer_norm softmax; do
  timeout 120 scripts/bench-rows $o/bench-rows-$s $s > $o/bench-rows-$s.txt 2>&1; echo "exit $?" >> $o/bench-rows-$s.txt
  pack bench-rows-$s
done
pack done
rm -rf $o
