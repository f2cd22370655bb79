#!/usr/bin/env bash
# (ran with the two shape files under .scratch/, identical to the ones named here)
# sliding_window_attention after the instruction cuts: GPU tests, check, bench (bandjit only)
o=$OUT/r; mkdir -p $o
export BANDJIT_CACHE_DIR=/tmp/c BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
b=build/bandjit
git log --oneline -1 > $o/commit.txt; git status --short >> $o/commit.txt
$b pregenerate --ops sliding_window_attention -j 16 --shapes bench/shapes/issue-6.json tests/shapes/edge-cases.json > $o/pregen.txt 2>&1; tail -1 $o/pregen.txt
timeout 200 build/tests/bandjit_gpu_tests "[sliding_window_attention]" --reporter compact > $o/gpu-tests.txt 2>&1; tail -2 $o/gpu-tests.txt
$b check --ops sliding_window_attention --shapes bench/shapes/issue-6.json tests/shapes/edge-cases.json --json $o/check.json > $o/check.txt 2>&1; grep -E "^check|FAIL" $o/check.txt | head
$b bench --shapes bench/shapes/issue-6.json --runs 30 --json $o/bench.json > $o/bench.txt 2>&1; grep sliding $o/bench.txt
BANDJIT_ATTENTION_KEY_TILE=128 $b bench --shapes bench/results/2026-12-01-issue-6/issue-6-main.json --runs 30 --json $o/bench-keys128.json > $o/bench-keys128.txt 2>&1; grep sliding $o/bench-keys128.txt
tar czf $OUT/r.tgz -C $OUT r
