#!/usr/bin/env bash
# Call 1 (carry build/bandjit, build/tests/bandjit_gpu_tests and build/smid-placement, the
# working tree after 73a22e9 with BANDJIT_ROW_SM_SLICES): where the H200 places clusters of
# 4 (smid-placement.cu); issue 7's layer_norm forwards at H = 65536 with each cluster's
# slices chosen by SM (modes 1-4) against the default, two rounds in opposite order, `check`
# of the H = 65536 forwards under each setting, and the GPU tests [layer_norm] under mode 1.
d=bench/results/2026-12-04-sm-slices
o=$OUT/c1; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c1.tgz -C $OUT c1; }
export BANDJIT_CACHE_DIR=/tmp/c1-cache
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
build/smid-placement > $o/smid-placement.txt 2>&1; pack placement
s=("default" "BANDJIT_ROW_SM_SLICES=1" "BANDJIT_ROW_SM_SLICES=2" "BANDJIT_ROW_SM_SLICES=3" "BANDJIT_ROW_SM_SLICES=4")
CHECK_SHAPES=$d/ln-check.json scripts/sweep-rows $o/r1 $d/ln-65536.json "${s[@]}" > $o/r1.txt 2>&1; pack r1
scripts/sweep-rows $o/r2 $d/ln-65536.json "${s[4]}" "${s[3]}" "${s[2]}" "${s[1]}" "${s[0]}" > $o/r2.txt 2>&1; pack r2
BANDJIT_ROW_SM_SLICES=1 build/tests/bandjit_gpu_tests "[layer_norm]" > $o/gpu-tests-sm1.txt 2>&1
echo "gpu tests rc=$?" >> $o/steps.txt; pack done
rm -rf $o
