#!/usr/bin/env bash
# One call (carry build/bandjit = the working tree after e9beb41 with the staged backward's
# dead row checks removed, build/bandjit-head = e9beb41's code (73a22e9's kernels),
# build/tests/bandjit_gpu_tests, build/smid-placement-256): cluster placement in the layer_norm
# forward's layout (4 x 256 threads, four blocks an SM); the staged and overlapped backwards
# of issue 7 with both binaries, two rounds in turn; GPU tests [layer_norm]; `check` of
# issue 7's layer_norm file with the new binary.
d=bench/results/2026-12-04-final
o=$OUT/c1; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c1.tgz -C $OUT c1; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
build/smid-placement-256 > $o/smid-placement-256.txt 2>&1; pack placement
for b in bandjit bandjit-head; do
  BANDJIT_CACHE_DIR=/tmp/cache-$b build/$b pregenerate -j 16 --shapes $d/staged-backward.json bench/shapes/issue-7-layer-norm.json > $o/pregenerate-$b.txt 2>&1
done
for round in 1 2; do
  for b in bandjit-head bandjit; do
    BANDJIT_CACHE_DIR=/tmp/cache-$b build/$b bench --runs 30 --shapes $d/staged-backward.json --json $o/bench-$b-$round.json > $o/bench-$b-$round.txt 2>&1
  done
done
pack bench
BANDJIT_CACHE_DIR=/tmp/cache-bandjit timeout 150 build/tests/bandjit_gpu_tests "[layer_norm]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack gpu-tests
BANDJIT_CACHE_DIR=/tmp/cache-bandjit timeout 200 build/bandjit check --timing-runs 1 --shapes bench/shapes/issue-7-layer-norm.json --json $o/check.json > $o/check.txt 2>&1
echo "exit $?" >> $o/check.txt; pack done
rm -rf $o
