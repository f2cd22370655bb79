#!/usr/bin/env bash
# Sixth call (carry build/bandjit and build/tests/bandjit_gpu_tests = 75f688d): clusters of two heads'
# rows sharing their boolean mask row (BANDJIT_ROW_HEAD_PAIRS=1), alone and with
# BANDJIT_ROW_MASK_WORDS=1, against the default, two rounds in opposite order, `check` of the
# same shapes in round 1; then, under the pairs knob, the GPU tests [softmax] and `check` of
# tests/shapes/softmax.json and issue 7's softmax file.
d=bench/results/2026-12-04-head-order
o=$OUT/c6; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c6.tgz -C $OUT c6; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CACHE_DIR=/tmp/c6-cache
s=("default" "BANDJIT_ROW_HEAD_PAIRS=1" "BANDJIT_ROW_HEAD_PAIRS=1 BANDJIT_ROW_MASK_WORDS=1")
CHECK_SHAPES=$d/masked-forward.json scripts/sweep-rows $o/r1 $d/masked-forward.json "${s[@]}" > $o/r1.txt 2>&1; pack r1
scripts/sweep-rows $o/r2 $d/masked-forward.json "${s[2]}" "${s[1]}" "${s[0]}" > $o/r2.txt 2>&1; pack r2
export BANDJIT_ROW_HEAD_PAIRS=1
timeout 150 build/tests/bandjit_gpu_tests "[softmax]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack gpu-tests
build/bandjit pregenerate -j 16 --shapes tests/shapes/softmax.json bench/shapes/issue-7-softmax.json > $o/check-pregenerate.txt 2>&1
build/bandjit check --timing-runs 1 --shapes tests/shapes/softmax.json bench/shapes/issue-7-softmax.json --json $o/check.json > $o/check.txt 2>&1
tail -1 $o/check.txt; tail -3 $o/gpu-tests.txt; pack done
rm -rf $o
