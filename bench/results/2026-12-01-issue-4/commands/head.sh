#!/usr/bin/env bash
# HEAD (after the pack_pair rename and the TPR guard): band_tpv and attention_backward GPU tests, band_tpv checks
o=$OUT/head; mkdir -p $o
pack() { tar czf $OUT/head.tgz -C $OUT head; }
export BANDJIT_CACHE_DIR=$(mktemp -d) BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
S="tests/shapes/edge-cases.json shapes/longformer-base-4096.json shapes/longformer-large-4096.json shapes/longformer-charlm-small.json shapes/seed-workload-grid.json"
( time build/bandjit pregenerate -j 16 --ops training --shapes $S ) > $o/pregenerate.txt 2>&1
timeout 100 build/tests/bandjit_gpu_tests "[band_tpv],[attention_backward]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack
timeout 90 build/bandjit check --ops band_tpv --shapes $S --json $o/check-tpv.json > $o/check-tpv.txt 2>&1; echo "exit $?" >> $o/check-tpv.txt; pack
