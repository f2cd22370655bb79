#!/usr/bin/env bash
# Eighth call (carry build/bandjit = d152acd): the 16-bit H = 65536 forward in 8-byte pieces
# under other thread layouts (clusters of 8 × 256, 4 × 512, 2 × 512, 2 × 1024 threads) and
# weights ahead, against the default (clusters of 4 × 256); two rounds, opposite order.
d=bench/results/2026-12-03-weight-prefetch
o=$OUT/c8; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c8.tgz -C $OUT c8; }
export BANDJIT_SOURCE_DIR=$PWD
V=BANDJIT_ROW_VEC_BYTES=8
s=("default" "$V BANDJIT_ROW_REGISTERS=16 BANDJIT_ROW_BLOCK_THREADS=256"
   "$V BANDJIT_ROW_REGISTERS=16 BANDJIT_ROW_BLOCK_THREADS=512" "$V BANDJIT_ROW_REGISTERS=32 BANDJIT_ROW_BLOCK_THREADS=512"
   "$V BANDJIT_ROW_REGISTERS=16 BANDJIT_ROW_BLOCK_THREADS=1024"
   "$V BANDJIT_ROW_REGISTERS=16 BANDJIT_ROW_BLOCK_THREADS=256 BANDJIT_ROW_WEIGHT_AHEAD=2"
   "$V BANDJIT_ROW_REGISTERS=16 BANDJIT_ROW_BLOCK_THREADS=512 BANDJIT_ROW_WEIGHT_AHEAD=1")
scripts/sweep-rows $o/r1 $d/pairs.json "${s[@]}" > $o/r1.txt 2>&1; pack r1
r=(); for ((i=${#s[@]}-1; i>=0; i--)); do r+=("${s[$i]}"); done
scripts/sweep-rows $o/r2 $d/pairs.json "${r[@]}" > $o/r2.txt 2>&1; pack r2
pack done
rm -rf $o
