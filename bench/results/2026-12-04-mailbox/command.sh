#!/usr/bin/env bash
# Mailbox call 1 (carry build/bandjit and build/tests/bandjit_gpu_tests with the mailbox,
# .scratch/head/bandjit of 6cf87a2 without it, .scratch/mb): same-run A/B of the long
# cluster rows' forwards (old, new, old, new), issue 7's two sets beside PyTorch with the
# new binary, GPU tests and `check` of every layer_norm and softmax shape file.
o=$OUT/m1; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/m1.tgz -C $OUT m1; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
s=".scratch/mb/ln-long.json .scratch/mb/sm-long.json"
for b in old new; do
  bin=build/bandjit; [ $b = old ] && bin=.scratch/head/bandjit
  BANDJIT_CACHE_DIR=/tmp/cache-$b $bin pregenerate -j 16 --shapes $s > $o/pregenerate-$b.txt 2>&1
done
for r in 1 2; do
  for b in old new; do
    bin=build/bandjit; [ $b = old ] && bin=.scratch/head/bandjit
    BANDJIT_CACHE_DIR=/tmp/cache-$b timeout 120 $bin bench --shapes $s --json $o/ab-$r-$b.json > $o/ab-$r-$b.txt 2>&1
  done
  pack ab-$r
done
export BANDJIT_CACHE_DIR=/tmp/cache-new
f="tests/shapes/edge-cases.json tests/shapes/layer-norm.json tests/shapes/softmax.json bench/shapes/issue-7-layer-norm.json bench/shapes/issue-7-softmax.json"
build/bandjit pregenerate -j 16 --shapes $f > $o/pregenerate.txt 2>&1; pack pregenerate
for set in layer_norm softmax; do timeout 200 scripts/bench-rows $o/rows-$set $set > $o/rows-$set.txt 2>&1; pack rows-$set; done
[ -x build/tests/bandjit_gpu_tests ] && { timeout 200 build/tests/bandjit_gpu_tests "[runtime],[layer_norm],[softmax]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack gpu-tests; }
timeout 300 build/bandjit check --timing-runs 1 --shapes $f --json $o/check.json > $o/check.txt 2>&1; echo "exit $?" >> $o/check.txt
pack done
rm -rf $o
