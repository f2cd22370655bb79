#!/usr/bin/env bash
# Builds the lazy-mask harness on the build machine (nvcc 13, sm_90a) from the emitted kernel
# of 74a52de (the same k16.cu as ../prepass/build.sh). Call 2 ran `$W/harness` (carried as
# .scratch/lazy/harness) with no arguments; its output is ../out/c2/harness.txt.
set -e
cd "$(dirname "$0")"
w=${1:-/tmp/lazy}; mkdir -p $w
../../../../build/bandjit emit --family scale_mask_softmax --standalone --problem \
  '{"batch": 1, "heads": 16, "queries": 64, "row_length": 65536, "dtype": "float16", "scale": 0.08838834764831845, "mask": "boolean"}' > $w/k16.cu
python3 make-lazy.py $w
for v in o l1 l2 l2u ou lb; do nvcc -std=c++17 -O3 -arch=sm_90a -c -o $w/k16$v.o $w/k16$v.cu; done
nvcc -std=c++17 -O3 -arch=sm_90a -o $w/harness harness.cu $w/k16{o,l1,l2,l2u,ou,lb}.o
