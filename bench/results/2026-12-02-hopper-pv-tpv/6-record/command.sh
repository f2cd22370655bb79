#!/usr/bin/env bash
# Record of HEAD: the Hopper kernels of band_qk/band_pv/band_tpv against mma.sync in one run, GPU tests, checks, peers
o=$OUT/w6; mkdir -p $o
pack() { tar czf $OUT/w6.tgz -C $OUT w6; }
export BANDJIT_CACHE_DIR=$(mktemp -d) BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
S="tests/shapes/edge-cases.json shapes/longformer-base-4096.json shapes/longformer-large-4096.json shapes/longformer-charlm-small.json shapes/seed-workload-grid.json"
( time build/bandjit pregenerate -j 16 --ops training --shapes .scratch/record-shapes.json $S ) > $o/pregenerate.txt 2>&1
timeout 60 build/bandjit bench --shapes .scratch/record-shapes.json --runs 30 --json $o/bench-wgmma.json > $o/bench-wgmma.txt 2>&1
BANDJIT_QK_WGMMA=0 BANDJIT_PV_WGMMA=0 BANDJIT_TPV_WGMMA=0 timeout 90 build/bandjit bench --shapes .scratch/record-shapes.json --runs 30 --json $o/bench-mma.json > $o/bench-mma.txt 2>&1
pack
timeout 120 build/tests/bandjit_gpu_tests "[band_qk],[band_pv],[band_tpv],[attention_backward],[runtime]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack
timeout 100 build/bandjit check --ops band_qk band_pv band_tpv --shapes $S --json $o/check-qk-pv-tpv.json > $o/check-qk-pv-tpv.txt 2>&1; echo "exit $?" >> $o/check-qk-pv-tpv.txt; pack
timeout 50 build/bandjit check --ops attention_backward --shapes tests/shapes/edge-cases.json --json $o/check-backward.json > $o/check-backward.txt 2>&1; echo "exit $?" >> $o/check-backward.txt; pack
timeout 150 python3 bench/peers/peers.py --shapes .scratch/record-shapes.json --json $o/peers.json > $o/peers.txt 2>&1; echo "exit $?" >> $o/peers.txt
python3 bench/merge.py $o/bench-wgmma.json $o/peers.json $o/merged > $o/merge.txt 2>&1; pack
