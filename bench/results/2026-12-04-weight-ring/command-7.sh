#!/usr/bin/env bash
# Call 7 (carry build/bandjit and build/tests/bandjit_gpu_tests = 73d0686, the final code:
# the ring within sm_80's budget, the emulator's cp.async by groups): GPU tests [layer_norm];
# `check` of tests/shapes/layer-norm.json and issue 7's layer_norm file.
o=$OUT/c7; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c7.tgz -C $OUT c7; }
export BANDJIT_CACHE_DIR=/tmp/c7-cache
timeout 150 build/tests/bandjit_gpu_tests "[layer_norm]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack gpu-tests
build/bandjit pregenerate -j 16 --shapes tests/shapes/layer-norm.json bench/shapes/issue-7-layer-norm.json > $o/pregenerate.txt 2>&1
timeout 240 build/bandjit check --timing-runs 1 --shapes tests/shapes/layer-norm.json bench/shapes/issue-7-layer-norm.json --json $o/check.json > $o/check.txt 2>&1
echo "exit $?" >> $o/check.txt; pack done
rm -rf $o
