#!/usr/bin/env bash
# Call 3 on the H200 (carry build/bandjit, build/tests/bandjit_gpu_tests): the final code —
# the staged forward removed; the overlapped backward the default for 16-bit rows of
# H >= 16384 and float32 rows of H >= 16384 (4 stages), float32 rows without an overlapped
# layout staged in 256-thread blocks. GPU tests [layer_norm]; `check` of issue 7's layer_norm
# file; `scripts/bench-rows OUT layer_norm` beside PyTorch; the overlapped backward's stage
# count on the long rows (3, 5, 6 against the default 4).
d=bench/results/2026-12-03-layer-norm-staged-forward
o=$OUT/c3; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c3.tgz -C $OUT c3; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
timeout 150 build/tests/bandjit_gpu_tests "[layer_norm]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack gpu-tests
timeout 150 build/bandjit check --timing-runs 1 --shapes bench/shapes/issue-7-layer-norm.json --json $o/check.json > $o/check.txt 2>&1
echo "exit $?" >> $o/check.txt; pack check
timeout 150 scripts/bench-rows $o/bench-rows layer_norm > $o/bench-rows.txt 2>&1; echo "exit $?" >> $o/bench-rows.txt
pack bench-rows
timeout 120 scripts/sweep-rows $o/stages $d/ln-long-5120.json default BANDJIT_ROW_STAGES=3 BANDJIT_ROW_STAGES=5 \
  BANDJIT_ROW_STAGES=6 > $o/stages.txt 2>&1
pack done
rm -rf $o
