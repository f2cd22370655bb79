#!/usr/bin/env bash
# Call 2 on the H200 (carry build/bandjit, build/tests/bandjit_gpu_tests, .scratch/bandjit-staged-v1):
# the staged backward with each row's mean and rstd loaded a row ahead and two blocks an SM
# where they fit (build/bandjit), against call 1's staged kernel (bandjit-staged-v1) and the
# register kernel (BANDJIT_ROW_STAGED=0), in one run.
#  1. the GPU tests [layer_norm] (defaults); `check` of tests/shapes/layer-norm.json with the
#     staged kernel wherever it has a layout (BANDJIT_ROW_STAGED=1);
#  2. `bench` of ln-long.json: register kernel, staged, call 1's staged, twice in turn.
o=$OUT/ln-staged-2; mkdir -p $o
pack() { echo "$SECONDS s" >> $o/steps.txt; tar czf $OUT/ln-staged-2.tgz -C $OUT ln-staged-2; }
d=bench/results/2026-12-02-layer-norm-staged
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit BANDJIT_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $o/gpu.txt
timeout 120 build/tests/bandjit_gpu_tests --reporter compact "[layer_norm]" > $o/gpu-tests-layer-norm.txt 2>&1; echo "exit $?" >> $o/gpu-tests-layer-norm.txt; pack
BANDJIT_ROW_STAGED=1 timeout 150 build/bandjit check --shapes tests/shapes/layer-norm.json --ops layer_norm_backward --json $o/check-small-staged.json > $o/check-small-staged.txt 2>&1; echo "exit $?" >> $o/check-small-staged.txt; pack
for i in 1 2; do
  BANDJIT_ROW_STAGED=0 timeout 90 build/bandjit bench --shapes $d/ln-long.json --json $o/bench-register-$i.json > $o/bench-register-$i.txt 2>&1; pack
  BANDJIT_ROW_STAGED=1 timeout 90 build/bandjit bench --shapes $d/ln-long.json --json $o/bench-staged-$i.json > $o/bench-staged-$i.txt 2>&1; pack
  BANDJIT_ROW_STAGED=1 BANDJIT_CACHE_DIR=$(mktemp -d) timeout 90 .scratch/bandjit-staged-v1 bench --shapes $d/ln-long.json --json $o/bench-v1-$i.json > $o/bench-v1-$i.txt 2>&1; pack
done
pack; rm -rf $o
