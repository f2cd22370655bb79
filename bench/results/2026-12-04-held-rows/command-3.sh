#!/usr/bin/env bash
# Held rows, call 3 (carry build/bandjit and build/tests/bandjit_gpu_tests of the final code:
# held rows the default for unmasked 16-bit softmax forwards at L = 16384 and 65536): GPU
# tests [softmax], issue 7's two sets beside PyTorch, the 16-bit long rows again, and `check`
# of the edge cases, issue 7's softmax set and the long rows.
d=bench/results/2026-12-04-held-rows
o=$OUT/h3; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/h3.tgz -C $OUT h3; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
export BANDJIT_CACHE_DIR=/tmp/cache-h3
f="tests/shapes/edge-cases.json bench/shapes/issue-7-softmax.json $d/sm16.json"
build/bandjit pregenerate -j 16 --shapes $f bench/shapes/issue-7-layer-norm.json > $o/pregenerate.txt 2>&1; pack pregenerate
timeout 200 build/tests/bandjit_gpu_tests "[softmax]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack gpu-tests
for set in layer_norm softmax; do timeout 150 scripts/bench-rows $o/rows-$set $set > $o/rows-$set.txt 2>&1; pack rows-$set; done
timeout 60 build/bandjit bench --shapes $d/sm16.json --json $o/long.json > $o/long.txt 2>&1; pack long
timeout 150 build/bandjit check --timing-runs 1 --shapes $f --json $o/check.json > $o/check.txt 2>&1; echo "exit $?" >> $o/check.txt
pack done
rm -rf $o
