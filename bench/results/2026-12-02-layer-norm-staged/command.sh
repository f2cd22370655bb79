#!/usr/bin/env bash
# On the H200 (carry build/bandjit, build/tests/bandjit_gpu_tests): layer_norm_backward staged
# through shared memory by bulk copies (templates/layer_norm_staged.cuh) against the register
# kernel, in one run.
#  1. correctness: the GPU tests [layer_norm] (defaults); `check` of tests/shapes/layer-norm.json
#     with the staged kernel wherever it has a layout (BANDJIT_ROW_STAGED=1); `check` of the
#     backward of ln-long.json (2^26 elements) under the defaults;
#  2. `bench` of ln-long.json: BANDJIT_ROW_STAGED=0 (register kernel) and =1 (staged wherever a
#     layout exists), twice in turn; then staged with BANDJIT_ROW_WAVES=1 and 4.
o=$OUT/ln-staged; mkdir -p $o
pack() { echo "$SECONDS s" >> $o/steps.txt; tar czf $OUT/ln-staged.tgz -C $OUT ln-staged; }
d=bench/results/2026-12-02-layer-norm-staged
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit BANDJIT_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $o/gpu.txt
timeout 120 build/tests/bandjit_gpu_tests --reporter compact "[layer_norm]" > $o/gpu-tests-layer-norm.txt 2>&1; echo "exit $?" >> $o/gpu-tests-layer-norm.txt; pack
BANDJIT_ROW_STAGED=1 timeout 150 build/bandjit check --shapes tests/shapes/layer-norm.json --ops layer_norm_backward --json $o/check-small-staged.json > $o/check-small-staged.txt 2>&1; echo "exit $?" >> $o/check-small-staged.txt; pack
timeout 150 build/bandjit check --shapes $d/ln-long.json --ops layer_norm_backward --json $o/check-long.json > $o/check-long.txt 2>&1; echo "exit $?" >> $o/check-long.txt; pack
for i in 1 2; do
  for st in 0 1; do
    BANDJIT_ROW_STAGED=$st timeout 90 build/bandjit bench --shapes $d/ln-long.json --json $o/bench-staged$st-$i.json > $o/bench-staged$st-$i.txt 2>&1
    pack
  done
done
for w in 1 4; do
  BANDJIT_ROW_STAGED=1 BANDJIT_ROW_WAVES=$w timeout 90 build/bandjit bench --shapes $d/ln-long.json --json $o/bench-staged1-waves$w.json > $o/bench-staged1-waves$w.txt 2>&1
  pack
done
pack; rm -rf $o
