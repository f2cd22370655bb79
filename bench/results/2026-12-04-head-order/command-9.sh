#!/usr/bin/env bash
# Ninth call (carry build/bandjit = bc2d717, build/bandjit-prev = f4c0f24, build/tests/bandjit_gpu_tests
# = bc2d717): the staged layer_norm backward with its rows split evenly over the clusters, against
# f4c0f24 (fcfd80f's kernels), on issue 7's staged rows (ln-staged.json), two rounds in
# alternating order; GPU tests [layer_norm]; `check` of issue 7's layer_norm file.
d=bench/results/2026-12-04-head-order
o=$OUT/c9; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c9.tgz -C $OUT c9; }
export BANDJIT_SOURCE_DIR=$PWD
for b in bandjit bandjit-prev; do
  BANDJIT_CACHE_DIR=/tmp/c9-$b build/$b pregenerate -j 16 --shapes $d/ln-staged.json bench/shapes/issue-7-layer-norm.json > $o/pregenerate-$b.txt 2>&1
done
pack pregenerate
for r in 1 2; do
  for b in bandjit bandjit-prev; do
    [ $r = 2 ] && b=$([ $b = bandjit ] && echo bandjit-prev || echo bandjit)
    BANDJIT_CACHE_DIR=/tmp/c9-$b timeout 60 build/$b bench --runs 30 --shapes $d/ln-staged.json --json $o/bench-$b-r$r.json > $o/bench-$b-r$r.txt 2>&1
  done
  pack r$r
done
BANDJIT_CACHE_DIR=/tmp/c9-bandjit timeout 100 build/tests/bandjit_gpu_tests "[layer_norm]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack gpu-tests
BANDJIT_CACHE_DIR=/tmp/c9-bandjit timeout 120 build/bandjit check --timing-runs 1 --shapes bench/shapes/issue-7-layer-norm.json --json $o/check.json > $o/check.txt 2>&1
echo "exit $?" >> $o/check.txt; tail -2 $o/check.txt; tail -3 $o/gpu-tests.txt; pack done
rm -rf $o
