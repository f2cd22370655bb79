#!/usr/bin/env bash
# band_pv's Hopper kernel (and band_tpv's Hopper path): speed against the mma.sync kernels in one run; GPU tests; checks
o=$OUT/w4; mkdir -p $o
pack() { tar czf $OUT/w4.tgz -C $OUT w4; }
export BANDJIT_CACHE_DIR=$(mktemp -d) BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
S="tests/shapes/edge-cases.json shapes/longformer-base-4096.json shapes/longformer-large-4096.json shapes/longformer-charlm-small.json shapes/seed-workload-grid.json"
( time build/bandjit pregenerate -j 16 --ops training --shapes .scratch/pv-shapes.json $S ) > $o/pregenerate.txt 2>&1
timeout 60 build/bandjit bench --shapes .scratch/pv-shapes.json --runs 30 --json $o/bench-wgmma.json > $o/bench-wgmma.txt 2>&1
BANDJIT_PV_WGMMA=0 BANDJIT_TPV_WGMMA=0 timeout 90 build/bandjit bench --shapes .scratch/pv-shapes.json --runs 30 --json $o/bench-mma.json > $o/bench-mma.txt 2>&1
pack
timeout 150 build/tests/bandjit_gpu_tests "[band_pv],[band_tpv],[attention_backward]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack
timeout 120 build/bandjit check --ops band_pv band_tpv --shapes $S --json $o/check-pv-tpv.json > $o/check-pv-tpv.txt 2>&1; echo "exit $?" >> $o/check-pv-tpv.txt; pack
timeout 60 build/bandjit check --ops attention_backward --shapes tests/shapes/edge-cases.json --json $o/check-backward.json > $o/check-backward.txt 2>&1; echo "exit $?" >> $o/check-backward.txt; pack
