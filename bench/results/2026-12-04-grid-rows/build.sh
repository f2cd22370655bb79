#!/usr/bin/env bash
# Builds the grid-rows harness on the build machine (nvcc 13, sm_90a) into .scratch/grid.
set -e
cd "$(dirname "$0")"
w=${1:-../../../.scratch/grid}; mkdir -p $w
nvcc -std=c++17 -O3 -arch=sm_90a -Xptxas -v -o $w/harness harness.cu 2>&1 | grep -E "error|spill" | sort | uniq -c
cp ln-16bit-65536.json $w/
