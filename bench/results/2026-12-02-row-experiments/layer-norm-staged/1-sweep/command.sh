#!/usr/bin/env bash
# Device call 1 (2026-12-02 afternoon): layer_norm staged rows beside the defaults, correctness
# of the staged kernels, and softmax staging on the rows below 80 %.
set -uo pipefail
export BANDJIT_CACHE_DIR=$(mktemp -d) BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
O=$OUT/sweep1; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
ln_full=bench/shapes/issue-7-layer-norm.json
scripts/sweep-rows $O/ln-full $ln_full default "BANDJIT_ROW_STAGED=1" "BANDJIT_ROW_STAGED=1 BANDJIT_ROW_STAGES=2" "BANDJIT_ROW_STAGED=1 BANDJIT_ROW_STAGES=4" > $O/ln-full.log 2>&1
echo "ln-full done $(date +%T)"
scripts/sweep-rows $O/ln-sub .scratch/ln-sweep.json "BANDJIT_ROW_STAGED=1 BANDJIT_ROW_WAVES=2" "BANDJIT_ROW_STAGED=1 BANDJIT_ROW_STAGES=6" \
  "BANDJIT_ROW_STAGED=1 BANDJIT_ROW_BLOCK_THREADS=512" "BANDJIT_ROW_STAGED=1 BANDJIT_ROW_BLOCK_THREADS=256 BANDJIT_ROW_REGISTERS=32" \
  "BANDJIT_ROW_STAGED=1 BANDJIT_ROW_BLOCK_THREADS=1024" "BANDJIT_ROW_STAGED=1 BANDJIT_ROW_REGISTER_SUMS=0 BANDJIT_ROW_BLOCK_THREADS=512" \
  "BANDJIT_ROW_STAGED=1 BANDJIT_ROW_BLOCK_THREADS=256 BANDJIT_ROW_REGISTERS=16" > $O/ln-sub.log 2>&1
echo "ln-sub done $(date +%T)"
scripts/sweep-rows $O/sm .scratch/sm-sweep.json default "BANDJIT_ROW_STAGED=0" "BANDJIT_ROW_STAGED=1" "BANDJIT_ROW_BLOCK_THREADS=1024" "BANDJIT_ROW_REGISTERS=64 BANDJIT_ROW_BLOCK_THREADS=1024" > $O/sm.log 2>&1
echo "sm done $(date +%T)"
# Correctness of the staged kernels: GPU tests and check, small and large rows.
export BANDJIT_ROW_STAGED=1
build/bandjit pregenerate -j 16 --shapes tests/shapes/layer-norm.json .scratch/ln-sweep.json > $O/check-pregenerate.txt 2>&1
timeout 120 build/tests/bandjit_gpu_tests --reporter compact "[layer_norm]" > $O/gpu-tests-staged.txt 2>&1; echo "gpu tests exit $?" | tee -a $O/gpu-tests-staged.txt
build/bandjit check --shapes tests/shapes/layer-norm.json .scratch/ln-sweep.json --timing-runs 1 --json $O/check-staged.json > $O/check-staged.txt 2>&1; echo "check exit $?"; tail -2 $O/check-staged.txt
cd $OUT && tar czf sweep1.tgz sweep1 && rm -rf sweep1
