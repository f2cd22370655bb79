#!/usr/bin/env bash
# Call 5 (carry build/bandjit and build/tests/bandjit_gpu_tests = 64a34c5: the ring by cp.async.ca,
# default for float32 rows of H > 16384): GPU tests [layer_norm]; `check` of
# tests/shapes/layer-norm.json and issue 7's layer_norm file; issue 7's forwards at H = 16384
# and 65536 with the default against BANDJIT_ROW_WEIGHT_RING=0 (the source of bd1c032, md5 of
# `bandjit emit`), two rounds in opposite order; `scripts/bench-rows OUT layer_norm`.
d=bench/results/2026-12-04-weight-ring
o=$OUT/c5; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c5.tgz -C $OUT c5; }
export BANDJIT_CACHE_DIR=/tmp/c5-cache
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
timeout 150 build/tests/bandjit_gpu_tests "[layer_norm]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack gpu-tests
build/bandjit pregenerate -j 16 --shapes tests/shapes/layer-norm.json bench/shapes/issue-7-layer-norm.json > $o/pregenerate.txt 2>&1
timeout 240 build/bandjit check --timing-runs 1 --shapes tests/shapes/layer-norm.json bench/shapes/issue-7-layer-norm.json --json $o/check.json > $o/check.txt 2>&1
echo "exit $?" >> $o/check.txt; pack check
s=("default" "BANDJIT_ROW_WEIGHT_RING=0")
scripts/sweep-rows $o/r1 $d/ln-long.json "${s[@]}" > $o/r1.txt 2>&1; pack r1
scripts/sweep-rows $o/r2 $d/ln-long.json "${s[1]}" "${s[0]}" > $o/r2.txt 2>&1; pack r2
timeout 150 scripts/bench-rows $o/bench-rows-layer_norm layer_norm > $o/bench-rows-layer_norm.txt 2>&1; echo "exit $?" >> $o/bench-rows-layer_norm.txt
pack done
rm -rf $o
