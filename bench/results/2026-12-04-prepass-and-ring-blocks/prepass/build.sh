#!/usr/bin/env bash
# Builds the prepass harness on the build machine (nvcc 13, sm_90a) from the emitted kernel
# of 74a52de: k16.cu = `bandjit emit --standalone` of issue 7's masked float16 L = 65536
# forward; make-variants.py writes k16o.cu (as emitted) and k16b.cu (bits + pack kernel).
set -e
cd "$(dirname "$0")"
w=${1:-/tmp/prepass}; mkdir -p $w
../../../../build/bandjit emit --family scale_mask_softmax --standalone --problem \
  '{"batch": 1, "heads": 16, "queries": 64, "row_length": 65536, "dtype": "float16", "scale": 0.08838834764831845, "mask": "boolean"}' > $w/k16.cu
python3 make-variants.py $w
nvcc -std=c++17 -O3 -arch=sm_90a -DBITS -diag-suppress 128 -c -o $w/k16b.o $w/k16b.cu
nvcc -std=c++17 -O3 -arch=sm_90a -o $w/harness harness.cu $w/k16o.cu $w/k16b.o
