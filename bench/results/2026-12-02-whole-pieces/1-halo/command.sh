#!/usr/bin/env bash
# band_qk whose rows' last 16-byte pieces are written whole (write_band_rows with BandScoreAt)
# against the binary before it (.scratch/bandjit-base = commit 3a3ebe4), alternated in one
# call; then correctness of the new kernels: GPU tests [band_qk], check --ops band_qk.
# Carry build/bandjit, build/tests/bandjit_gpu_tests, .scratch/bandjit-base.
# (It ran as ab-qk.sh from the folder above.)
R=bench/results/2026-12-02-whole-pieces; o=$OUT/ab-qk; mkdir -p $o
export BANDJIT_SOURCE_DIR=$PWD
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt
for bin in base new; do
  exe=build/bandjit; [ $bin = base ] && exe=.scratch/bandjit-base
  d=$(mktemp -d); $exe pregenerate -j 16 --cache-dir $d --shapes $R/qk-shapes.json > $o/pregenerate-$bin.txt 2>&1
  echo $d > $o/cache-$bin.txt
done
for rep in 1 2; do for bin in base new; do
  exe=build/bandjit; [ $bin = base ] && exe=.scratch/bandjit-base
  timeout 120 $exe bench --runs 50 --cache-dir $(cat $o/cache-$bin.txt) --shapes $R/qk-shapes.json --json $o/bench-$bin-$rep.json > $o/bench-$bin-$rep.txt 2>&1
done; done
export BANDJIT_CACHE_DIR=$(cat $o/cache-new.txt)
timeout 240 build/tests/bandjit_gpu_tests "[band_qk]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt
timeout 200 build/bandjit check --ops band_qk --shapes tests/shapes/edge-cases.json shapes/*.json --json $o/check.json > $o/check.txt 2>&1; echo "exit $?" >> $o/check.txt
tar czf $OUT/ab-qk.tgz -C $OUT ab-qk; rm -rf $o
