#!/usr/bin/env bash
# One call on 73a22e9's code (carry build/bandjit, build/tests/bandjit_gpu_tests): GPU tests
# [layer_norm] and [softmax], `check` of issue 7's two files, and `scripts/bench-rows` of
# both sets beside PyTorch, all in the same run.
o=$OUT/c1; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c1.tgz -C $OUT c1; }
export BANDJIT_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
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
