#!/usr/bin/env bash
# Mailbox call 3 (carry build/bandjit and build/tests/bandjit_gpu_tests of the final code: the
# mailbox in the layer_norm forward and the softmax forward's register rows, the staged rows
# as before; .scratch/mb): GPU tests, issue 7's two sets beside PyTorch, `check` of every
# layer_norm and softmax shape file and the edge cases, and the long rows' forwards again.
o=$OUT/m3; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/m3.tgz -C $OUT m3; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
export BANDJIT_CACHE_DIR=/tmp/cache-m3
timeout 240 build/tests/bandjit_gpu_tests "[runtime],[layer_norm],[softmax]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack gpu-tests
f="tests/shapes/edge-cases.json tests/shapes/layer-norm.json tests/shapes/softmax.json bench/shapes/issue-7-layer-norm.json bench/shapes/issue-7-softmax.json"
build/bandjit pregenerate -j 16 --shapes $f .scratch/mb/ln-long.json .scratch/mb/sm-long.json > $o/pregenerate.txt 2>&1; pack pregenerate
for set in layer_norm softmax; do timeout 200 scripts/bench-rows $o/rows-$set $set > $o/rows-$set.txt 2>&1; pack rows-$set; done
timeout 100 build/bandjit bench --shapes .scratch/mb/ln-long.json .scratch/mb/sm-long.json --json $o/long.json > $o/long.txt 2>&1; pack long
timeout 240 build/bandjit check --timing-runs 1 --shapes $f --json $o/check.json > $o/check.txt 2>&1; echo "exit $?" >> $o/check.txt
pack done
rm -rf $o
