#!/usr/bin/env bash
# Seventh call, the final code (carry build/bandjit, build/tests/bandjit_gpu_tests): GPU tests
# [layer_norm] and [softmax], `check` of issue 7's two files, `scripts/bench-rows` of both sets
# beside PyTorch.
o=$OUT/c7; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c7.tgz -C $OUT c7; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CACHE_DIR=$(mktemp -d)
timeout 150 build/tests/bandjit_gpu_tests "[layer_norm],[softmax]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack gpu-tests
build/bandjit pregenerate -j 16 --shapes bench/shapes/issue-7-layer-norm.json bench/shapes/issue-7-softmax.json > $o/pregenerate.txt 2>&1; pack pregenerate
timeout 250 build/bandjit check --timing-runs 1 --shapes bench/shapes/issue-7-layer-norm.json bench/shapes/issue-7-softmax.json --json $o/check.json > $o/check.txt 2>&1
echo "exit $?" >> $o/check.txt; pack check
for s in layer_norm softmax; do
  timeout 120 scripts/bench-rows $o/bench-rows-$s $s > $o/bench-rows-$s.txt 2>&1; echo "exit $?" >> $o/bench-rows-$s.txt
  pack bench-rows-$s
done
pack done
rm -rf $o
