#!/usr/bin/env bash
# band_tpv's Hopper (wgmma) path: speed against the mma.sync path in one run, a tiling sweep, GPU tests and checks
o=$OUT/w1; mkdir -p $o
pack() { tar czf $OUT/w1.tgz -C $OUT w1; }
export BANDJIT_CACHE_DIR=$(mktemp -d) BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
S="tests/shapes/edge-cases.json shapes/longformer-base-4096.json shapes/longformer-large-4096.json shapes/longformer-charlm-small.json shapes/seed-workload-grid.json"
( time build/bandjit pregenerate -j 16 --ops band_tpv --shapes .scratch/tpv-shapes.json ) > $o/pregenerate.txt 2>&1
timeout 60 build/bandjit bench --shapes .scratch/tpv-shapes.json --runs 30 --json $o/bench-tpv-wgmma.json > $o/bench-tpv-wgmma.txt 2>&1
BANDJIT_TPV_WGMMA=0 timeout 60 build/bandjit bench --shapes .scratch/tpv-shapes.json --runs 30 --json $o/bench-tpv-mma.json > $o/bench-tpv-mma.txt 2>&1
for t in 128,64,2 128,32,4 64,32,4 128,32,2; do
  BANDJIT_TPV_TILING=$t timeout 40 build/bandjit bench --shapes .scratch/tpv-shapes.json --runs 30 > $o/bench-tpv-tiling-$t.txt 2>&1
done
pack
( time build/bandjit pregenerate -j 16 --ops training --shapes $S ) >> $o/pregenerate.txt 2>&1; pack
timeout 150 build/tests/bandjit_gpu_tests "[band_tpv],[attention_backward]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack
timeout 90 build/bandjit check --ops band_tpv --shapes $S --json $o/check-tpv.json > $o/check-tpv.txt 2>&1; echo "exit $?" >> $o/check-tpv.txt; pack
timeout 60 build/bandjit check --ops attention_backward --shapes tests/shapes/edge-cases.json --json $o/check-backward.json > $o/check-backward.txt 2>&1; echo "exit $?" >> $o/check-backward.txt; pack
