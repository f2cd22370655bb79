#!/usr/bin/env bash
# band_softmax: rows per thread group 2, 3, 4, 6, 8, 12 on every problem of shapes.json, with HEAD's kernels built by a binary whose BANDJIT_ROW_WAVES also takes 3, 6 and
# 12 (knob-values.patch; the kernel takes any count). Seed float16: 12 rows a group is 512
# blocks, one wave of 4 blocks on each of 132 SMs. Carry .scratch/bandjit-g.
R=bench/results/2026-12-02-whole-pieces/3-softmax-groups; o=$OUT/r4; mkdir -p $o
export BANDJIT_SOURCE_DIR=$PWD
N=$(mktemp -d)
for g in 2 3 4 6 8 12; do BANDJIT_ROW_WAVES=$g .scratch/bandjit-g pregenerate -j 16 --cache-dir $N --shapes $R/shapes.json >> $o/pregenerate.txt 2>&1; done
for rep in 1 2; do for g in 2 3 4 6 8 12; do
  BANDJIT_ROW_WAVES=$g timeout 60 .scratch/bandjit-g bench --runs 50 --cache-dir $N --shapes $R/shapes.json --json $o/bench-g$g-$rep.json > $o/bench-g$g-$rep.txt 2>&1
done; done
tar czf $OUT/r4.tgz -C $OUT r4; rm -rf $o
