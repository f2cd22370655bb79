#!/usr/bin/env bash
# Call 5 on the H200 (carry .scratch/final5): the final code, commit 7087045, built in a clean
# worktree (bandjit and bandjit_gpu_tests, copied into build/ here).
#  1. the GPU tests [layer_norm]; `check` of issue 7's whole layer_norm file (both families,
#     2^26 elements each, float64 reference);
#  2. scripts/bench-rows OUT layer_norm: issue 7's file beside PyTorch's kernels.
o=$OUT/ln-staged-5; mkdir -p $o
pack() { echo "$SECONDS s" >> $o/steps.txt; tar czf $OUT/ln-staged-5.tgz -C $OUT ln-staged-5; }
mkdir -p build/tests && cp .scratch/final5/bandjit build/bandjit && cp .scratch/final5/bandjit_gpu_tests build/tests/
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit BANDJIT_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $o/gpu.txt
timeout 120 build/tests/bandjit_gpu_tests --reporter compact "[layer_norm]" > $o/gpu-tests-layer-norm.txt 2>&1; echo "exit $?" >> $o/gpu-tests-layer-norm.txt; pack
timeout 200 build/bandjit check --shapes bench/shapes/issue-7-layer-norm.json --json $o/check-issue-7.json > $o/check-issue-7.txt 2>&1; echo "exit $?" >> $o/check-issue-7.txt; pack
timeout 240 scripts/bench-rows $o/bench-rows-layer_norm layer_norm > $o/bench-rows-layer_norm.txt 2>&1; echo "exit $?" >> $o/bench-rows-layer_norm.txt
pack; rm -rf $o
