#!/usr/bin/env bash
# band_qk's Hopper kernel in clusters of consecutive heads that write shared 16-byte pieces
# whole (BANDJIT_QK_CLUSTER = 1 … 6; default 4), and band_softmax whose thread groups store the
# piece two consecutive rows share once, whole; against the binary before (3a3ebe4,
# .scratch/bandjit-base), in one call. Then correctness: GPU tests [band_qk] and
# [band_softmax], `check --ops band_qk band_softmax` of the edge cases and shape files (default
# cluster), and band_qk's checks again with clusters of 3 and 6.
# Carry build/bandjit, build/tests/bandjit_gpu_tests, .scratch/bandjit-base.
R=bench/results/2026-12-02-whole-pieces; o=$OUT/r2; mkdir -p $o
export BANDJIT_SOURCE_DIR=$PWD
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt
B=$(mktemp -d); N=$(mktemp -d)
.scratch/bandjit-base pregenerate -j 16 --cache-dir $B --shapes $R/shapes.json > $o/pregenerate.txt 2>&1
for c in 1 2 3 4 6; do BANDJIT_QK_CLUSTER=$c build/bandjit pregenerate -j 16 --cache-dir $N --shapes $R/shapes.json >> $o/pregenerate.txt 2>&1; done
for rep in 1 2; do
  timeout 100 .scratch/bandjit-base bench --runs 50 --cache-dir $B --shapes $R/shapes.json --json $o/bench-base-$rep.json > $o/bench-base-$rep.txt 2>&1
  timeout 100 build/bandjit bench --runs 50 --cache-dir $N --shapes $R/shapes.json --json $o/bench-new-$rep.json > $o/bench-new-$rep.txt 2>&1
done
for c in 1 2 3 6; do
  BANDJIT_QK_CLUSTER=$c timeout 100 build/bandjit bench --runs 50 --cache-dir $N --shapes $R/shapes.json --json $o/bench-cluster-$c.json > $o/bench-cluster-$c.txt 2>&1
done
export BANDJIT_CACHE_DIR=$N
timeout 150 build/tests/bandjit_gpu_tests "[band_qk],[band_softmax]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt
timeout 150 build/bandjit check --ops band_qk band_softmax --shapes tests/shapes/edge-cases.json shapes/*.json --json $o/check.json > $o/check.txt 2>&1; echo "exit $?" >> $o/check.txt
for c in 3 6; do BANDJIT_QK_CLUSTER=$c timeout 60 build/bandjit check --ops band_qk --shapes tests/shapes/edge-cases.json shapes/longformer-base-4096.json > $o/check-cluster-$c.txt 2>&1; echo "exit $?" >> $o/check-cluster-$c.txt; done
tar czf $OUT/r2.tgz -C $OUT r2; rm -rf $o
