#!/usr/bin/env bash
# The 16-bit H = 100 backward with two-row units under layout settings (one call on the H200;
# carry build/bandjit, build/tests/bandjit_gpu_tests), after command.sh 1 measured the units'
# default layout slower than one row a unit; then the GPU tests [layer_norm] and [band_pv].
o=$OUT/row-units; mkdir -p $o
pack() { tar czf $OUT/row-units.tgz -C $OUT row-units; }
d=bench/results/2026-12-02-row-units
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit BANDJIT_CACHE_DIR=$(mktemp -d)
n=0
for s in "BANDJIT_ROW_BUNDLE=0" "" "BANDJIT_ROW_PIECES=8" "BANDJIT_ROW_REGISTERS=32" \
         "BANDJIT_ROW_REGISTERS=32 BANDJIT_ROW_PREFETCH=1" \
         "BANDJIT_ROW_PIECES=8 BANDJIT_ROW_PREFETCH=1 BANDJIT_ROW_REGISTER_SUMS=1" \
         "BANDJIT_ROW_PIECES=8 BANDJIT_ROW_PREFETCH=1 BANDJIT_ROW_BLOCK_THREADS=128" \
         "BANDJIT_ROW_PIECES=8 BANDJIT_ROW_PREFETCH=1 BANDJIT_ROW_WAVES=2" \
         "BANDJIT_ROW_PIECES=1 BANDJIT_ROW_PREFETCH=1" \
         "BANDJIT_ROW_PIECES=8 BANDJIT_ROW_PREFETCH=1 BANDJIT_ROW_BLOCK_THREADS=512" \
         "BANDJIT_ROW_BUNDLE=0 BANDJIT_ROW_PIECES=8 BANDJIT_ROW_PREFETCH=1" "BANDJIT_ROW_BUNDLE=0" ""; do
  n=$((n + 1)); echo "$n: $s" >> $o/bwd-settings.txt
  env $s timeout 60 build/bandjit bench --shapes $d/ln-100-backward.json --json $o/bwd-$n.json > $o/bwd-$n.txt 2>&1
done
pack
timeout 150 build/tests/bandjit_gpu_tests --reporter compact "[layer_norm]" > $o/gpu-tests-layer-norm.txt 2>&1; echo "exit $?" >> $o/gpu-tests-layer-norm.txt; pack
timeout 150 build/tests/bandjit_gpu_tests --reporter compact "[band_pv]" > $o/gpu-tests-band-pv.txt 2>&1; echo "exit $?" >> $o/gpu-tests-band-pv.txt
pack; rm -rf $o
