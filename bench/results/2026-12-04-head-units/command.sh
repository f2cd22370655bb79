#!/usr/bin/env bash
# Call 1 (carry build/bandjit and build/tests/bandjit_gpu_tests, the working tree after
# 73a22e9 with BANDJIT_ROW_HEAD_ROWS): issue 7's 16-bit L = 65536 softmax forwards with
# staged blocks (clusters) taking 1, 2, 4 or 8 heads of one query in turn, two rounds in
# opposite order, `check` of every staged per-query forward under each setting, and the
# GPU tests [softmax] with units of 2 heads.
d=bench/results/2026-12-04-head-units
o=$OUT/c1; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c1.tgz -C $OUT c1; }
export BANDJIT_CACHE_DIR=/tmp/c1-cache
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
s=("default" "BANDJIT_ROW_HEAD_ROWS=2" "BANDJIT_ROW_HEAD_ROWS=4" "BANDJIT_ROW_HEAD_ROWS=8")
CHECK_SHAPES=$d/units-check.json scripts/sweep-rows $o/r1 $d/long.json "${s[@]}" > $o/r1.txt 2>&1; pack r1
scripts/sweep-rows $o/r2 $d/long.json "${s[3]}" "${s[2]}" "${s[1]}" "${s[0]}" > $o/r2.txt 2>&1; pack r2
BANDJIT_ROW_HEAD_ROWS=2 build/tests/bandjit_gpu_tests "[softmax]" > $o/gpu-tests-hr2.txt 2>&1
echo "gpu tests rc=$?" >> $o/steps.txt; pack done
rm -rf $o
