#!/usr/bin/env bash
# band_tpv with one or two m-tiles per warp (BANDJIT_TPV_ROW_TILES), float32 with four stages: timings and checks
o=$OUT/final2; mkdir -p $o
pack() { tar czf $OUT/final2.tgz -C $OUT final2; }
export BANDJIT_CACHE_DIR=$(mktemp -d) BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
S="tests/shapes/edge-cases.json shapes/longformer-base-4096.json shapes/longformer-large-4096.json shapes/longformer-charlm-small.json shapes/seed-workload-grid.json"
for mw in 1 2; do
  export BANDJIT_TPV_ROW_TILES=$mw
  ( time build/bandjit pregenerate -j 16 --ops training --shapes $S bench/shapes/issue-4.json .scratch/tpv-shapes.json ) > $o/pregenerate-mw$mw.txt 2>&1
  timeout 40 build/bandjit bench --shapes .scratch/tpv-shapes.json --runs 30 --json $o/bench-tpv-mw$mw.json > $o/bench-tpv-mw$mw.txt 2>&1
  timeout 60 build/bandjit bench --shapes bench/shapes/issue-4.json --runs 30 --json $o/bench-issue-4-mw$mw.json > $o/bench-issue-4-mw$mw.txt 2>&1; pack
done
for mw in 2 1; do
  export BANDJIT_TPV_ROW_TILES=$mw
  timeout 110 build/bandjit check --ops band_tpv --shapes $S --json $o/check-tpv-mw$mw.json > $o/check-tpv-mw$mw.txt 2>&1; echo "exit $?" >> $o/check-tpv-mw$mw.txt; pack
done
unset BANDJIT_TPV_ROW_TILES
timeout 60 build/tests/bandjit_gpu_tests "[band_tpv]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack
