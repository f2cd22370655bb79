#!/usr/bin/env bash
# Final record of band_tpv with three stages for 128-row tiles: checks, GPU tests, bandjit beside its peers on issue 4's problems
o=$OUT/final4; mkdir -p $o
pack() { tar czf $OUT/final4.tgz -C $OUT final4; }
export BANDJIT_CACHE_DIR=$(mktemp -d) BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
( time build/bandjit pregenerate -j 16 --ops training --shapes tests/shapes/edge-cases.json shapes/*.json bench/shapes/issue-4.json .scratch/tpv-shapes.json ) > $o/pregenerate.txt 2>&1; pack
timeout 60 build/bandjit bench --shapes .scratch/tpv-shapes.json --runs 30 --json $o/bench-tpv.json > $o/bench-tpv.txt 2>&1
timeout 200 scripts/bench $o/bench-issue-4 bench/shapes/issue-4.json > $o/bench-issue-4.txt 2>&1; echo "exit $?" >> $o/bench-issue-4.txt; pack
timeout 240 build/tests/bandjit_gpu_tests "[band_tpv],[attention_backward]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack
timeout 120 build/bandjit check --ops band_tpv --shapes tests/shapes/edge-cases.json shapes/*.json --json $o/check-tpv.json > $o/check-tpv.txt 2>&1; echo "exit $?" >> $o/check-tpv.txt; pack
timeout 120 build/bandjit check --ops attention_backward --shapes tests/shapes/edge-cases.json --json $o/check-backward.json > $o/check-backward.txt 2>&1; echo "exit $?" >> $o/check-backward.txt; pack
