#!/usr/bin/env bash
# band_pv's Hopper kernel with the tile's P rows staged whole (this change) against the same
# binary with BANDJIT_PV_WHOLE_ROWS=0 (P in slabs, as 9c95bd5), in one call on the H200;
# bench times every family of each problem (forward and backward contain band_pv).
# Carry build/bandjit and build/tests/bandjit_gpu_tests. Outputs in $OUT/pv.tgz.
R=bench/results/2026-12-02-band-staging/2-pv-whole-rows; o=$OUT/pv; mkdir -p $o; export BANDJIT_SOURCE_DIR=$PWD
pack() { tar czf $OUT/pv.tgz -C $OUT pv; }
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > $o/gpu.txt 2>&1
export BANDJIT_CACHE_DIR=$(mktemp -d)
for w in "" 0 1; do
  BANDJIT_PV_WHOLE_ROWS=$w build/bandjit pregenerate -j 16 --ops training sliding_window_attention --shapes $R/shapes.json >> $o/pregenerate.txt 2>&1
done
for rep in 1 2; do
  for w in "" 0 1; do
    BANDJIT_PV_WHOLE_ROWS=$w timeout 120 build/bandjit bench --runs 50 --shapes $R/shapes.json --json $o/bench-w$w-$rep.json > $o/bench-w$w-$rep.txt 2>&1
  done
done
pack
# Whole rows with other slabs of V (1: also where only one block fits an SM)
for tl in 64,4 32,4 64,2 128,3; do
  BANDJIT_PV_WHOLE_ROWS=1 BANDJIT_PV_WGMMA_TILING=$tl timeout 60 build/bandjit bench --runs 50 --shapes $R/tiling-shapes.json > $o/bench-tiling-$tl.txt 2>&1
done
pack
timeout 100 build/tests/bandjit_gpu_tests "[band_pv]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt
pack
timeout 150 build/bandjit check --ops band_pv --shapes tests/shapes/edge-cases.json bench/shapes/issue-3.json shapes/longformer-base-4096.json shapes/longformer-large-4096.json > $o/check.txt 2>&1; echo "exit $?" >> $o/check.txt
pack
