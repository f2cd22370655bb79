#!/usr/bin/env bash
# Call 3 on the H200 (carry build/bandjit, build/tests/bandjit_gpu_tests): the final code, row
# pairs the default for 16-bit forward rows of 128 … 2048 pieces: GPU tests [layer_norm],
# `check` of issue 7's layer_norm file, `bench` beside PyTorch (scripts/bench-rows OUT layer_norm).
o=$OUT/final; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/final.tgz -C $OUT final; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
timeout 150 build/tests/bandjit_gpu_tests "[layer_norm]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack gpu-tests
timeout 150 build/bandjit check --timing-runs 1 --shapes bench/shapes/issue-7-layer-norm.json --json $o/check.json > $o/check.txt 2>&1
echo "exit $?" >> $o/check.txt; pack check
timeout 150 scripts/bench-rows $o/bench-rows layer_norm > $o/bench-rows.txt 2>&1; echo "exit $?" >> $o/bench-rows.txt
pack done
rm -rf $o
