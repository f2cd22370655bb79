#!/usr/bin/env bash
# Call 4 on the H200 (carry build/bandjit and build/tests/bandjit_gpu_tests, built from the
# working tree of the ring commit):
#  1. the GPU tests [softmax] (tests/shapes/softmax.json against float64; its 16-bit rows of
#     L >= 16384 take the ring forward by default);
#  2. `bandjit bench` of ring-ab.json (forward rows of issue 7's sizes, 2^26 elements) under
#     BANDJIT_ROW_RING=0 (the staged / register kernels), =1 (the ring wherever it fits,
#     now 1024 threads by default), and =1 with 512 threads. The ring of call 2 holds each
#     thread's pieces of a row in registers and releases the slots before the reduction;
#     call 3's reduces (M, S) by warp maximum then rescaled sum (no chain of combines);
#     call 4's keeps e = exp(v - piece max) rounded to T in the raw pieces' place, so the
#     write pass is one multiply an element (one exp2 an element, not two; it spills).
o=$OUT/ring-4; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/ring-4.tgz -C $OUT ring-4; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit BANDJIT_CACHE_DIR=$(mktemp -d)
F=bench/results/2026-12-02-softmax-ring/ring-ab.json
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $o/gpu.txt
variant() {  # name, env...
  local name=$1; shift
  env "$@" timeout 60 build/bandjit pregenerate -j 16 --shapes $F > $o/pregenerate-$name.txt 2>&1
  env "$@" timeout 100 build/bandjit bench --shapes $F --json $o/bench-$name.json > $o/bench-$name.txt 2>&1
  echo "exit $?" >> $o/bench-$name.txt; pack $name
}
variant ring0 BANDJIT_ROW_RING=0
variant ring1 BANDJIT_ROW_RING=1
variant ring1-t512 BANDJIT_ROW_RING=1 BANDJIT_ROW_BLOCK_THREADS=512
timeout 200 build/tests/bandjit_gpu_tests --reporter compact "[softmax]" > $o/gpu-tests-softmax.txt 2>&1
echo "exit $?" >> $o/gpu-tests-softmax.txt; pack gpu-tests
rm -rf $o
