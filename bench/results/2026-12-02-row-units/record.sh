#!/usr/bin/env bash
# The record of this change on the H200 (carry build/bandjit, build/tests/bandjit_gpu_tests), in two calls:
#  `record.sh 1`: softmax L = 100 with two-row units (default) and without (BANDJIT_ROW_BUNDLE=0),
#     twice in turn (`bench` of sm-100.json: issue 7's masked rows, and the unmasked rows with an
#     even count); `check` of tests/shapes/softmax.json and layer-norm.json (float64 reference,
#     fresh inputs, NaN-poisoned outputs); the GPU tests [softmax] and [layer_norm];
#  `record.sh 2` (the final code, softmax units reverted): the same checks and GPU tests, then
#     scripts/bench-rows for issue 7's softmax and layer_norm files (bandjit beside PyTorch's own
#     kernels, every row).
part=${1:-1}
o=$OUT/record-$part; mkdir -p $o
pack() { tar czf $OUT/record-$part.tgz -C $OUT record-$part; }
d=bench/results/2026-12-02-row-units
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit BANDJIT_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/gpu.txt
if [ $part = 1 ]; then
  for i in 1 2; do
    BANDJIT_ROW_BUNDLE=0 timeout 60 build/bandjit bench --shapes $d/sm-100.json --json $o/sm100-off-$i.json > $o/sm100-off-$i.txt 2>&1
    timeout 60 build/bandjit bench --shapes $d/sm-100.json --json $o/sm100-on-$i.json > $o/sm100-on-$i.txt 2>&1
  done
  pack
  for s in softmax layer-norm; do
    timeout 150 build/bandjit check --shapes tests/shapes/$s.json --timing-runs 3 --json $o/check-$s.json > $o/check-$s.txt 2>&1
    echo "exit $?" >> $o/check-$s.txt; pack
  done
  for t in softmax layer_norm; do
    timeout 120 build/tests/bandjit_gpu_tests --reporter compact "[$t]" > $o/gpu-tests-$t.txt 2>&1
    echo "exit $?" >> $o/gpu-tests-$t.txt; pack
  done
else
  for s in softmax layer-norm; do
    timeout 150 build/bandjit check --shapes tests/shapes/$s.json --timing-runs 3 --json $o/check-$s.json > $o/check-$s.txt 2>&1
    echo "exit $?" >> $o/check-$s.txt; pack
  done
  for t in softmax layer_norm; do
    timeout 120 build/tests/bandjit_gpu_tests --reporter compact "[$t]" > $o/gpu-tests-$t.txt 2>&1
    echo "exit $?" >> $o/gpu-tests-$t.txt; pack
  done
  for s in softmax layer_norm; do
    timeout 280 scripts/bench-rows $o/bench-issue-7-$s $s > $o/bench-rows-$s.txt 2>&1; echo "exit $?" >> $o/bench-rows-$s.txt; pack
  done
fi
pack; rm -rf $o
