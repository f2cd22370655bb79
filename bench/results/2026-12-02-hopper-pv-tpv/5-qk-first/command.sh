#!/usr/bin/env bash
# band_qk's Hopper kernel (first run), band_pv's slab sweep; all three Hopper paths against mma.sync; GPU tests; checks
o=$OUT/w5; mkdir -p $o
pack() { tar czf $OUT/w5.tgz -C $OUT w5; }
export BANDJIT_CACHE_DIR=$(mktemp -d) BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
S="tests/shapes/edge-cases.json shapes/longformer-base-4096.json shapes/longformer-large-4096.json shapes/longformer-charlm-small.json shapes/seed-workload-grid.json"
( time build/bandjit pregenerate -j 16 --ops training --shapes .scratch/pv-shapes.json $S ) > $o/pregenerate.txt 2>&1
timeout 60 build/bandjit bench --shapes .scratch/pv-shapes.json --runs 30 --json $o/bench-wgmma.json > $o/bench-wgmma.txt 2>&1
BANDJIT_QK_WGMMA=0 BANDJIT_PV_WGMMA=0 BANDJIT_TPV_WGMMA=0 timeout 90 build/bandjit bench --shapes .scratch/pv-shapes.json --runs 30 --json $o/bench-mma.json > $o/bench-mma.txt 2>&1
pack
timeout 150 build/tests/bandjit_gpu_tests "[band_qk],[band_pv],[band_tpv],[attention_backward],[runtime]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack
timeout 120 build/bandjit check --ops band_qk band_pv band_tpv --shapes $S --json $o/check-qk-pv-tpv.json > $o/check-qk-pv-tpv.txt 2>&1; echo "exit $?" >> $o/check-qk-pv-tpv.txt; pack
timeout 60 build/bandjit check --ops attention_backward --shapes tests/shapes/edge-cases.json --json $o/check-backward.json > $o/check-backward.txt 2>&1; echo "exit $?" >> $o/check-backward.txt; pack
P='{"batch":1,"heads":12,"seq_len":4096,"head_dim":64,"window_left":256,"window_right":256,"dilation":1,"dtype":"float16","layout":"bnhd"}'
P12='{"batch":12,"heads":12,"seq_len":4096,"head_dim":64,"window_left":256,"window_right":256,"dilation":1,"dtype":"float16","layout":"bnhd"}'
for t in 64,3 64,2 32,3 32,2; do BANDJIT_PV_WGMMA_TILING=$t timeout 30 build/bandjit bench --problem "$P" --problem "$P12" --runs 30 > $o/bench-pv-${t/,/-}.txt 2>&1; done
for d in 1024 200 128; do BANDJIT_TILE_DIAGONALS=$d timeout 30 build/bandjit bench --problem "$P" --problem "$P12" --runs 30 > $o/bench-qk-diag-$d.txt 2>&1; done
pack
