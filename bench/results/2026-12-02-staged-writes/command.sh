#!/usr/bin/env bash
# band_tpv / band_pv_wgmma: Z and O written through shared memory as 16-byte row pieces.
# One run: HEAD's binary (c5b9bdf/e6131f5 kernels) and this change, bench, then GPU tests and checks of the changed kernels.
# .carry/bandjit-head: build/bandjit built at commit e6131f5 (kernels of c5b9bdf), copied before the change; carry it with build/bandjit and build/tests/bandjit_gpu_tests.
o=$OUT/zw1; mkdir -p $o
pack() { tar czf $OUT/zw1.tgz -C $OUT zw1; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
A=$(mktemp -d); B=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
S="tests/shapes/edge-cases.json shapes/longformer-base-4096.json shapes/longformer-charlm-small.json"
( time BANDJIT_CACHE_DIR=$A .carry/bandjit-head pregenerate -j 16 --ops training --shapes bench/results/2026-12-02-staged-writes/record-shapes.json ) > $o/pregenerate-head.txt 2>&1 &
( time BANDJIT_CACHE_DIR=$B build/bandjit pregenerate -j 16 --ops training --shapes bench/results/2026-12-02-staged-writes/record-shapes.json $S ) > $o/pregenerate.txt 2>&1
wait
BANDJIT_CACHE_DIR=$A timeout 60 .carry/bandjit-head bench --shapes bench/results/2026-12-02-staged-writes/record-shapes.json --runs 30 --json $o/bench-head.json > $o/bench-head.txt 2>&1
BANDJIT_CACHE_DIR=$B timeout 60 build/bandjit bench --shapes bench/results/2026-12-02-staged-writes/record-shapes.json --runs 30 --json $o/bench-staged.json > $o/bench-staged.txt 2>&1
pack
BANDJIT_CACHE_DIR=$B timeout 100 build/tests/bandjit_gpu_tests "[band_pv],[band_tpv]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack
BANDJIT_CACHE_DIR=$B timeout 90 build/bandjit check --ops band_pv band_tpv --shapes $S --json $o/check-pv-tpv.json > $o/check-pv-tpv.txt 2>&1; echo "exit $?" >> $o/check-pv-tpv.txt; pack
