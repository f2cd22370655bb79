#!/usr/bin/env bash
# On the H200 (carry build/bandjit, build/tests/bandjit_gpu_tests):
#  1. layer_norm H = 100 with two-row units (default) and without (BANDJIT_ROW_BUNDLE=0), twice
#     in turn, `bench` of ln-100.json;
#  2. staged softmax rows: `bench` of sm-long.json under staging tilings (BANDJIT_ROW_PIECES,
#     BANDJIT_ROW_BLOCK_THREADS), unmasked rows as they are and every row with BANDJIT_ROW_STAGED=1;
#  3. `check` of tests/shapes/layer-norm.json (float64 reference; its even 16-bit H = 100 rows
#     take the units) and the GPU tests [layer_norm].
# Ran as `command.sh 1` (out/command-1), with the backward taking units too (the default then).
# Its second part ([band_pv] GPU tests, bench-rows) was not run: sweep-backward.sh ran the
# [band_pv] tests and record.sh 2 the bench-rows, on later binaries.
part=${1:-1}
o=$OUT/row-units; mkdir -p $o
pack() { tar czf $OUT/row-units.tgz -C $OUT row-units; }
d=bench/results/2026-12-02-row-units
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit BANDJIT_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $o/gpu-$part.txt
if [ $part = 1 ]; then
for i in 1 2; do
  BANDJIT_ROW_BUNDLE=0 timeout 60 build/bandjit bench --shapes $d/ln-100.json --json $o/ln100-off-$i.json > $o/ln100-off-$i.txt 2>&1
  timeout 60 build/bandjit bench --shapes $d/ln-100.json --json $o/ln100-on-$i.json > $o/ln100-on-$i.txt 2>&1
done
pack
n=0
for s in "" "BANDJIT_ROW_PIECES=4" "BANDJIT_ROW_BLOCK_THREADS=128" "BANDJIT_ROW_BLOCK_THREADS=512" \
         "BANDJIT_ROW_PIECES=4 BANDJIT_ROW_BLOCK_THREADS=512"; do
  for st in "" "BANDJIT_ROW_STAGED=1"; do
    n=$((n + 1)); echo "$n: $s $st" >> $o/sm-settings.txt
    env $s $st timeout 60 build/bandjit bench --shapes $d/sm-long.json --json $o/sm-$n.json > $o/sm-$n.txt 2>&1
  done
done
pack
timeout 150 build/bandjit check --shapes tests/shapes/layer-norm.json --timing-runs 3 --json $o/check-layer-norm.json > $o/check-layer-norm.txt 2>&1; echo "exit $?" >> $o/check-layer-norm.txt; pack
timeout 120 build/tests/bandjit_gpu_tests --reporter compact "[layer_norm]" > $o/gpu-tests-layer-norm.txt 2>&1; echo "exit $?" >> $o/gpu-tests-layer-norm.txt; pack
fi
pack; rm -rf $o
