#!/usr/bin/env bash
# The new default (16-bit band_softmax takes eight rows a group where the grid keeps >= 16
# blocks an SM) against HEAD's binary (3a3ebe4, .scratch/bandjit-base), then its
# correctness: `check --ops band_softmax` (edge cases, the four shape files, issue-3.json) and
# the GPU tests [band_softmax]. Carry build/bandjit, build/tests/bandjit_gpu_tests,
# .scratch/bandjit-base.
R=bench/results/2026-12-02-whole-pieces/3-softmax-groups; o=$OUT/r5; mkdir -p $o
export BANDJIT_SOURCE_DIR=$PWD
B=$(mktemp -d); N=$(mktemp -d)
.scratch/bandjit-base pregenerate -j 16 --cache-dir $B --shapes $R/shapes.json > $o/pregenerate.txt 2>&1
build/bandjit pregenerate -j 16 --cache-dir $N --shapes $R/shapes.json >> $o/pregenerate.txt 2>&1
for rep in 1 2; do
  timeout 60 .scratch/bandjit-base bench --runs 50 --cache-dir $B --shapes $R/shapes.json --json $o/bench-base-$rep.json > $o/bench-base-$rep.txt 2>&1
  timeout 60 build/bandjit bench --runs 50 --cache-dir $N --shapes $R/shapes.json --json $o/bench-new-$rep.json > $o/bench-new-$rep.txt 2>&1
done
export BANDJIT_CACHE_DIR=$N
timeout 200 build/bandjit check --ops band_softmax --shapes tests/shapes/edge-cases.json shapes/*.json bench/shapes/issue-3.json --json $o/check.json > $o/check.txt 2>&1; echo "exit $?" >> $o/check.txt
timeout 120 build/tests/bandjit_gpu_tests "[band_softmax]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt
tar czf $OUT/r5.tgz -C $OUT r5; rm -rf $o
