#!/usr/bin/env bash
# layer_norm after the for_each_piece refactor (cfdb1bd): GPU tests, check, bench of issue 7's layer_norm rows
o=$OUT/lnr; mkdir -p $o
pack() { tar czf $OUT/lnr.tgz -C $OUT lnr; }
export BANDJIT_CACHE_DIR=$(mktemp -d) BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
( time build/bandjit pregenerate -j 16 --shapes tests/shapes/layer-norm.json bench/shapes/issue-7-layer-norm.json ) > $o/pregenerate.txt 2>&1
timeout 60 build/bandjit bench --shapes bench/shapes/issue-7-layer-norm.json --json $o/bench-layer-norm.json > $o/bench-layer-norm.txt 2>&1; pack
timeout 80 build/tests/bandjit_gpu_tests "[layer_norm]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack
timeout 90 build/bandjit check --shapes tests/shapes/layer-norm.json --timing-runs 1 --json $o/check-layer-norm.json > $o/check-layer-norm.txt 2>&1; echo "exit $?" >> $o/check-layer-norm.txt; pack
