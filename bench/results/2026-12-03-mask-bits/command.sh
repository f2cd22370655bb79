#!/usr/bin/env bash
# One call on the H200 (carry build/bandjit-prev = d152acd, build/bandjit and
# build/tests/bandjit_gpu_tests = this change: a boolean mask's bytes turned into bits four at a
# time). `bench` of the 16-bit L = 65536 forward rows, both binaries in turn, three rounds;
# then with the new binary GPU tests [softmax] and `check` of issue 7's softmax file.
d=bench/results/2026-12-03-mask-bits
o=$OUT/c1; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c1.tgz -C $OUT c1; }
export BANDJIT_SOURCE_DIR=$PWD
C=$(mktemp -d)
for b in bandjit-prev bandjit; do
  BANDJIT_CACHE_DIR=$C/$b build/$b pregenerate -j 16 --shapes $d/long16.json > $o/pregenerate-$b.txt 2>&1
done
for run in 1 2 3; do
  for b in bandjit-prev bandjit; do
    BANDJIT_CACHE_DIR=$C/$b timeout 60 build/$b bench --runs 30 --shapes $d/long16.json --json $o/bench-$b-$run.json > $o/bench-$b-$run.txt 2>&1
  done
done
pack bench
export BANDJIT_CACHE_DIR=$C/bandjit
timeout 100 build/tests/bandjit_gpu_tests "[softmax]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack gpu-tests
build/bandjit pregenerate -j 16 --shapes bench/shapes/issue-7-softmax.json > $o/pregenerate.txt 2>&1
timeout 200 build/bandjit check --timing-runs 1 --shapes bench/shapes/issue-7-softmax.json --json $o/check.json > $o/check.txt 2>&1
echo "exit $?" >> $o/check.txt; pack check
pack done
rm -rf $o
