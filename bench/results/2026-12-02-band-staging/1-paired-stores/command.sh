#!/usr/bin/env bash
# band_qk's Hopper kernel with its staging stores as 32-bit pairs (paired-stores.patch on
# 9c95bd5) against 9c95bd5's binary, in one call on the H200. Carry .scratch/bandjit-head
# (9c95bd5), .scratch/bandjit-paired and build/tests/bandjit_gpu_tests (both with the patch).
# Also two chunkings of the diagonals (BANDJIT_TILE_DIAGONALS) for each binary, then the GPU
# tests [band_qk] and check --ops band_qk of the new binary. Outputs straight into $OUT.
R=bench/results/2026-12-02-band-staging/1-paired-stores; o=$OUT; export BANDJIT_SOURCE_DIR=$PWD
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > $o/gpu.txt 2>&1
A=$(mktemp -d); P=$(mktemp -d)
.scratch/bandjit-head pregenerate -j 16 --cache-dir $A --shapes $R/shapes.json > $o/pregenerate.txt 2>&1
.scratch/bandjit-paired pregenerate -j 16 --cache-dir $P --shapes $R/shapes.json >> $o/pregenerate.txt 2>&1
for rep in 1 2; do
  timeout 40 .scratch/bandjit-head bench --runs 50 --cache-dir $A --shapes $R/shapes.json --json $o/head-$rep.json > $o/head-$rep.txt 2>&1
  timeout 40 .scratch/bandjit-paired bench --runs 50 --cache-dir $P --shapes $R/shapes.json --json $o/paired-$rep.json > $o/paired-$rep.txt 2>&1
done
for tj in 264 176; do
  BANDJIT_TILE_DIAGONALS=$tj timeout 60 .scratch/bandjit-head bench --runs 50 --cache-dir $A --shapes $R/shapes.json > $o/head-tj$tj.txt 2>&1
  BANDJIT_TILE_DIAGONALS=$tj timeout 60 .scratch/bandjit-paired bench --runs 50 --cache-dir $P --shapes $R/shapes.json > $o/paired-tj$tj.txt 2>&1
done
export BANDJIT_CACHE_DIR=$P
timeout 60 build/tests/bandjit_gpu_tests "[band_qk]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt
timeout 150 .scratch/bandjit-paired check --ops band_qk --shapes tests/shapes/edge-cases.json bench/shapes/issue-3.json shapes/longformer-base-4096.json > $o/check.txt 2>&1; echo "exit $?" >> $o/check.txt
