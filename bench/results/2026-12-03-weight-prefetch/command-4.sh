#!/usr/bin/env bash
# Fourth call (carry build/bandjit: + BANDJIT_ROW_VEC_BYTES, weights ahead also in row pairs):
# the 16-bit H = 65536 forward with narrower pieces (8 bytes: each lane's 4 weights contiguous
# with its neighbours', 16-byte weight loads over 512 contiguous bytes a warp), row pairs
# (clusters of 4 × 512 threads), weights ahead, and their combinations; two rounds, opposite order.
d=bench/results/2026-12-03-weight-prefetch
o=$OUT/c4; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c4.tgz -C $OUT c4; }
export BANDJIT_SOURCE_DIR=$PWD
P="BANDJIT_ROW_PAIRS=1 BANDJIT_ROW_REGISTERS=32 BANDJIT_ROW_BLOCK_THREADS=512"
s=("default" "BANDJIT_ROW_VEC_BYTES=8" "BANDJIT_ROW_VEC_BYTES=8 BANDJIT_ROW_WEIGHT_AHEAD=2"
   "BANDJIT_ROW_VEC_BYTES=8 $P" "$P" "$P BANDJIT_ROW_WEIGHT_AHEAD=1" "BANDJIT_ROW_WEIGHT_AHEAD=1"
   "BANDJIT_ROW_VEC_BYTES=4")
scripts/sweep-rows $o/r1 $d/pairs.json "${s[@]}" > $o/r1.txt 2>&1; pack r1
r=(); for ((i=${#s[@]}-1; i>=0; i--)); do r+=("${s[$i]}"); done
scripts/sweep-rows $o/r2 $d/pairs.json "${r[@]}" > $o/r2.txt 2>&1; pack r2
pack done
rm -rf $o
