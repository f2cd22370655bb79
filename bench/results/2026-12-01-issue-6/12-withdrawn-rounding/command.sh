#!/usr/bin/env bash
# Issue 6 at HEAD after the review fix: main problems twice, GPU tests, check of the edge cases
export BANDJIT_CACHE_DIR=/tmp/c BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
b=build/bandjit; o=$OUT/c; mkdir -p $o
$b pregenerate --ops sliding_window_attention -j 16 --shapes tests/shapes/edge-cases.json bench/results/2026-12-01-issue-6/issue-6-main.json > $o/pregen.txt 2>&1
for i in 1 2; do $b bench --shapes bench/results/2026-12-01-issue-6/issue-6-main.json --runs 50 --json $o/main-$i.json > $o/main-$i.txt 2>&1; grep sliding $o/main-$i.txt; done
timeout 60 build/tests/bandjit_gpu_tests "[sliding_window_attention]" --reporter compact > $o/gpu-tests.txt 2>&1; tail -1 $o/gpu-tests.txt
timeout 70 $b check --ops sliding_window_attention --shapes tests/shapes/edge-cases.json --json $o/check.json > $o/check.txt 2>&1; grep -E "^check|FAIL" $o/check.txt | head -5
tar czf $OUT/c.tgz -C $OUT c
