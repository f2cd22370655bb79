#!/usr/bin/env bash
# band_qk's Hopper kernel with its blocks run head-fastest in bnhd (decode_band_tile's kTileMajor),
# against HEAD's binary (efe201e) in one run: bench twice each, then the band_qk GPU tests and
# `check --ops band_qk`. .scratch/bandjit-head: build/bandjit built at efe201e; carry it with
# build/bandjit and build/tests/bandjit_gpu_tests.
o=$OUT/tm; mkdir -p $o
pack() { tar czf $OUT/tm.tgz -C $OUT tm; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
R=bench/results/2026-12-02-qk-pv-anatomy/tile-major/record-shapes.json
S="tests/shapes/edge-cases.json shapes/longformer-base-4096.json shapes/longformer-charlm-small.json shapes/longformer-large-4096.json"
A=$(mktemp -d); B=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
( time BANDJIT_CACHE_DIR=$A .scratch/bandjit-head pregenerate -j 8 --shapes $R ) > $o/pregenerate-head.txt 2>&1 &
( time BANDJIT_CACHE_DIR=$B build/bandjit pregenerate -j 8 --shapes $R && BANDJIT_CACHE_DIR=$B build/bandjit pregenerate -j 8 --ops band_qk --shapes $S ) > $o/pregenerate.txt 2>&1
wait
for i in 1 2; do
  BANDJIT_CACHE_DIR=$A timeout 60 .scratch/bandjit-head bench --shapes $R --runs 30 --json $o/bench-head-$i.json > $o/bench-head-$i.txt 2>&1
  BANDJIT_CACHE_DIR=$B timeout 60 build/bandjit bench --shapes $R --runs 30 --json $o/bench-tile-major-$i.json > $o/bench-tile-major-$i.txt 2>&1
done
pack
BANDJIT_CACHE_DIR=$B timeout 150 build/tests/bandjit_gpu_tests "[band_qk]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack
BANDJIT_CACHE_DIR=$B timeout 120 build/bandjit check --ops band_qk --shapes $S --json $o/check-qk.json > $o/check-qk.txt 2>&1; echo "exit $?" >> $o/check-qk.txt; pack
rm -rf $o
