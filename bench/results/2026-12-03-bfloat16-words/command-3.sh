#!/usr/bin/env bash
# Call 3 on the H200 (carry build/bandjit + build/tests/bandjit_gpu_tests = the final code:
# the first commit, byte-identical to call 2's build/bandjit-words; the FMA forms taken
# out). GPU tests [layer_norm] (call 2 ran [softmax], [band_softmax] and
# [band_softmax_backward] on the same softmax and band templates), `check` of issue 7's
# two files, `scripts/bench-rows` of both sets beside PyTorch.
o=$OUT/c3; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c3.tgz -C $OUT c3; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CACHE_DIR=$(mktemp -d)
build/bandjit pregenerate -j 16 --shapes bench/shapes/issue-7-layer-norm.json bench/shapes/issue-7-softmax.json > $o/pregenerate.txt 2>&1
pack pregenerate
timeout 100 build/tests/bandjit_gpu_tests "[layer_norm]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack gpu-tests
timeout 280 build/bandjit check --timing-runs 1 --shapes bench/shapes/issue-7-layer-norm.json bench/shapes/issue-7-softmax.json --json $o/check.json > $o/check.txt 2>&1
echo "exit $?" >> $o/check.txt; pack check
for s in layer_norm softmax; do
  timeout 80 scripts/bench-rows $o/bench-rows-$s $s > $o/bench-rows-$s.txt 2>&1; echo "exit $?" >> $o/bench-rows-$s.txt
  pack bench-rows-$s
done
pack done
rm -rf $o
