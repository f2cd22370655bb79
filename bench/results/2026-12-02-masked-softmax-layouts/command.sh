#!/usr/bin/env bash
# Masked softmax rows under other thread layouts (one call on the H200; carry build/bandjit,
# commit 623ebb8): fewer threads a row with more pieces each (BANDJIT_ROW_PIECES=8: 4 threads
# × 7 pieces at L = 100 16-bit; 4 at float32) and fewer registers a thread
# (BANDJIT_ROW_REGISTERS=16: L = 16384 over a cluster of 4 × 256 threads), in turn with the default.
o=$OUT/layouts; mkdir -p $o
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit BANDJIT_CACHE_DIR=$(mktemp -d)
d=bench/results/2026-12-02-masked-softmax-layouts
n=0
for s in "" "BANDJIT_ROW_PIECES=8" "BANDJIT_ROW_REGISTERS=16" "BANDJIT_ROW_PIECES=4" "BANDJIT_ROW_PIECES=8" ""; do
  n=$((n + 1)); echo "$n: $s" >> $o/settings.txt
  env $s timeout 60 build/bandjit bench --shapes $d/sm-short.json --json $o/sm-$n.json > $o/sm-$n.txt 2>&1
done
tar czf $OUT/layouts.tgz -C $OUT layouts; rm -rf $o
