#!/usr/bin/env bash
# After record.sh 1 measured softmax units slower (ptxas had split a unit piece's 16-byte store
# into four 4-byte ones): the same A/B of sm-100.json with the store forced whole (store_16),
# twice in turn (one call on the H200; carry build/bandjit).
o=$OUT/ab; mkdir -p $o
d=bench/results/2026-12-02-row-units
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit BANDJIT_CACHE_DIR=$(mktemp -d)
for i in 1 2; do
  BANDJIT_ROW_BUNDLE=0 timeout 60 build/bandjit bench --shapes $d/sm-100.json --json $o/sm100-off-$i.json > $o/sm100-off-$i.txt 2>&1
  timeout 60 build/bandjit bench --shapes $d/sm-100.json --json $o/sm100-on-$i.json > $o/sm100-on-$i.txt 2>&1
done
tar czf $OUT/ab.tgz -C $OUT ab; rm -rf $o
