#!/usr/bin/env bash
# band_softmax: rows per thread group (BANDJIT_ROW_WAVES) 2, 4 (float16 default), 8, 16 — the
# seed problem's grid is 2.9 waves of resident blocks with 4; more rows per group, fewer
# blocks. HEAD's binary (3a3ebe4). Carry build/bandjit.
R=bench/results/2026-12-02-whole-pieces/3-softmax-groups; o=$OUT/r3; mkdir -p $o
export BANDJIT_SOURCE_DIR=$PWD
N=$(mktemp -d)
for g in 2 4 8 16; do BANDJIT_ROW_WAVES=$g build/bandjit pregenerate -j 16 --cache-dir $N --shapes $R/shapes.json >> $o/pregenerate.txt 2>&1; done
for rep in 1 2; do for g in 2 4 8 16; do
  BANDJIT_ROW_WAVES=$g timeout 60 build/bandjit bench --runs 50 --cache-dir $N --shapes $R/shapes.json --json $o/bench-g$g-$rep.json > $o/bench-g$g-$rep.txt 2>&1
done; done
tar czf $OUT/r3.tgz -C $OUT r3; rm -rf $o
