#!/usr/bin/env bash
# Fifth call (carry build/bandjit: float16 in 8-byte pieces read by words): the 16-bit forward
# in 8-byte pieces (BANDJIT_ROW_VEC_BYTES=8), alone and with the first 1, 2 or 4 pieces'
# weights ahead, at H = 1024 … 65536; two rounds, opposite order.
d=bench/results/2026-12-03-weight-prefetch
o=$OUT/c5; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c5.tgz -C $OUT c5; }
export BANDJIT_SOURCE_DIR=$PWD
V=BANDJIT_ROW_VEC_BYTES=8
s=("default" "$V" "$V BANDJIT_ROW_WEIGHT_AHEAD=1" "$V BANDJIT_ROW_WEIGHT_AHEAD=2" "$V BANDJIT_ROW_WEIGHT_AHEAD=4")
scripts/sweep-rows $o/r1 $d/long16.json "${s[@]}" > $o/r1.txt 2>&1; pack r1
r=(); for ((i=${#s[@]}-1; i>=0; i--)); do r+=("${s[$i]}"); done
scripts/sweep-rows $o/r2 $d/long16.json "${r[@]}" > $o/r2.txt 2>&1; pack r2
pack done
rm -rf $o
