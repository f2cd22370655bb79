#!/usr/bin/env bash
# HEAD after the review fixes (accumulators pinned before the loop in band_tpv/band_pv, band_qk's Hopper launch bounds): seed timings, GPU tests, edge-case checks
o=$OUT/w7; mkdir -p $o
pack() { tar czf $OUT/w7.tgz -C $OUT w7; }
export BANDJIT_CACHE_DIR=$(mktemp -d) BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
( time build/bandjit pregenerate -j 16 --ops training --shapes .scratch/record-shapes.json tests/shapes/edge-cases.json ) > $o/pregenerate.txt 2>&1
timeout 40 build/bandjit bench --shapes .scratch/record-shapes.json --runs 30 --json $o/bench.json > $o/bench.txt 2>&1; pack
timeout 70 build/tests/bandjit_gpu_tests "[band_qk],[band_pv],[band_tpv],[attention_backward]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack
timeout 40 build/bandjit check --ops band_qk band_pv band_tpv attention_backward --shapes tests/shapes/edge-cases.json --json $o/check.json > $o/check.txt 2>&1; echo "exit $?" >> $o/check.txt; pack
