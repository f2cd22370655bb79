#!/usr/bin/env bash
# One call on the H200 (carry build/bandjit, build/tests/bandjit_gpu_tests, built from the
# commit that stages boolean-masked 16-bit rows from L = 32768):
#  1. scripts/sweep-rows on shapes.json (float32 L = 768 masked, the row that ties PyTorch,
#     and two neighbours) under the row layout knobs;
#  2. the defaults on ../2026-12-03-softmax-16384-registers/shapes.json (L = 32768 masked now staged);
#  3. GPU tests [softmax] and `check` over tests/shapes/softmax.json.
o=$OUT/rec; mkdir -p $o
export BANDJIT_CACHE_DIR=$(mktemp -d) BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/rec.tgz -C $OUT rec; }
timeout 200 scripts/sweep-rows $o/sweep-768 bench/results/2026-12-03-softmax-768-masked/shapes.json default \
  BANDJIT_ROW_PIECES=1 BANDJIT_ROW_PIECES=2 BANDJIT_ROW_PIECES=8 BANDJIT_ROW_BLOCK_THREADS=128 \
  BANDJIT_ROW_BLOCK_THREADS=512 BANDJIT_ROW_BLOCK_THREADS=1024 BANDJIT_ROW_REGISTERS=16 BANDJIT_ROW_REGISTERS=64 \
  > $o/sweep-768.log 2>&1; pack sweep-768
timeout 100 scripts/sweep-rows $o/sweep-long bench/results/2026-12-03-softmax-16384-registers/shapes.json default \
  > $o/sweep-long.log 2>&1; pack sweep-long
build/bandjit pregenerate -j 16 --shapes tests/shapes/softmax.json > $o/pregenerate.txt 2>&1
timeout 100 build/tests/bandjit_gpu_tests --reporter compact "[softmax]" > $o/gpu-tests-softmax.txt 2>&1
echo "exit $?" >> $o/gpu-tests-softmax.txt; pack gpu-tests
timeout 100 build/bandjit check --shapes tests/shapes/softmax.json --timing-runs 3 --json $o/check-softmax.json \
  > $o/check-softmax.txt 2>&1; echo "exit $?" >> $o/check-softmax.txt; pack check
rm -rf $o
