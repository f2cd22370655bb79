#!/usr/bin/env bash
# Call 3 (carry build/bandjit and build/tests/bandjit_gpu_tests of 8e929e2: the JSON limits and
# cache maintenance fixes; no kernel changed): GPU tests [runtime],[layer_norm],[softmax]; `check`
# of the edge cases, three-problems.json and issue 7's two files through the new shape-file reader.
o=$OUT/c3; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c3.tgz -C $OUT c3; }
export BANDJIT_CACHE_DIR=/tmp/c3-cache
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/gpu.txt 2>&1
timeout 200 build/tests/bandjit_gpu_tests "[runtime],[layer_norm],[softmax]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack gpu-tests
f="tests/shapes/edge-cases.json tests/shapes/three-problems.json bench/shapes/issue-7-layer-norm.json bench/shapes/issue-7-softmax.json"
build/bandjit pregenerate -j 16 --shapes $f > $o/pregenerate.txt 2>&1
timeout 300 build/bandjit check --timing-runs 1 --shapes $f --json $o/check.json > $o/check.txt 2>&1; echo "exit $?" >> $o/check.txt
pack done
rm -rf $o
