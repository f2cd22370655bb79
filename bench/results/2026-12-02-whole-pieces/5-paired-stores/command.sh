#!/usr/bin/env bash
# NOT RUN: too little of the session's device time was left to start a machine. Prepared for the next
# session (apply paired-stores.patch, rebuild). band_qk's Hopper kernel storing its accumulators
# into the staging tile as 32-bit pairs (a
# shuffle for rows of odd phase) against HEAD's binary (06a6da1 kernels, .scratch/bandjit-base
# = 3a3ebe4's, the same band_qk), then GPU tests [band_qk] and check --ops band_qk. Outputs
# written straight into $OUT (the device budget was nearly spent). Carry build/bandjit,
# build/tests/bandjit_gpu_tests, .scratch/bandjit-base.
R=bench/results/2026-12-02-whole-pieces/5-paired-stores; o=$OUT; export BANDJIT_SOURCE_DIR=$PWD
B=$(mktemp -d); N=$(mktemp -d)
.scratch/bandjit-base pregenerate -j 16 --cache-dir $B --shapes $R/shapes.json > $o/pregenerate.txt 2>&1
build/bandjit pregenerate -j 16 --cache-dir $N --shapes $R/shapes.json >> $o/pregenerate.txt 2>&1
for rep in 1 2; do
  timeout 30 .scratch/bandjit-base bench --runs 50 --cache-dir $B --shapes $R/shapes.json > $o/bench-base-$rep.txt 2>&1
  timeout 30 build/bandjit bench --runs 50 --cache-dir $N --shapes $R/shapes.json > $o/bench-new-$rep.txt 2>&1
done
export BANDJIT_CACHE_DIR=$N
timeout 40 build/tests/bandjit_gpu_tests "[band_qk]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt
timeout 60 build/bandjit check --ops band_qk --shapes tests/shapes/edge-cases.json bench/shapes/issue-3.json > $o/check.txt 2>&1; echo "exit $?" >> $o/check.txt
