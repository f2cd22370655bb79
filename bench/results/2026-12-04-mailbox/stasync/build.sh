#!/usr/bin/env bash
# Builds the st.async harness on the build machine (nvcc 13, sm_90a) from the emitted kernel:
# k.cu = `bandjit emit --standalone` of issue 7's float16 layer_norm forward at H = 65536
# (1024 rows); make-variant.py writes kasync.cu. Each file gets a launch wrapper with the
# generator's launch: one row a cluster of 4 blocks of 256 threads, 80 bytes of shared memory.
set -e
cd "$(dirname "$0")"
w=${1:-/tmp/stasync}; mkdir -p $w
bj=${BANDJIT:-../../../../build/bandjit}  # from bench/results/2026-12-04-mailbox/stasync
$bj emit --family layer_norm --standalone --problem \
  '{"rows": 1024, "hidden": 65536, "dtype": "float16"}' > $w/k.cu
python3 make-variant.py $w
wrap() {  # file kernel wrapper
  cat >> $1 <<EOW
void $3(const __half* x, const float* w, const float* b, __half* y, float* m, float* r, cudaStream_t s) {
  constexpr unsigned blocks = Cfg::kRows / (Cfg::kRowsPerBlock * Cfg::kRowIterations) * Cfg::kClusterBlocks;
  $2<<<blocks, Cfg::kThreads, 80, s>>>(x, w, b, y, m, r);
}
EOW
}
wrap $w/k.cu bandjit_layer_norm launch_orig
wrap $w/kasync.cu bandjit_layer_norm_async launch_async
for f in k kasync; do nvcc -std=c++17 -O3 -arch=sm_90a -Xptxas -v -diag-suppress 128 -c -o $w/$f.o $w/$f.cu 2>&1 | grep -E "error|registers|spill" || true; done
nvcc -std=c++17 -O3 -arch=sm_90a -o $w/harness harness.cu $w/k.o $w/kasync.o
