#!/usr/bin/env bash
# Sixth call (carry build/bandjit: + BANDJIT_ROW_STREAM_X, x read by ld.global.nc.L1::no_allocate):
# 8-byte 16-bit pieces with and without weights ahead, each with and without x streamed past
# the L1, at H = 16384 and 65536 (float32 too); two rounds, opposite order.
d=bench/results/2026-12-03-weight-prefetch
o=$OUT/c6; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c6.tgz -C $OUT c6; }
export BANDJIT_SOURCE_DIR=$PWD
V=BANDJIT_ROW_VEC_BYTES=8; X=BANDJIT_ROW_STREAM_X=1; A=BANDJIT_ROW_WEIGHT_AHEAD=1
s=("default" "$V" "$V $A" "$V $X" "$V $X $A" "$X")
scripts/sweep-rows $o/r1 $d/stream.json "${s[@]}" > $o/r1.txt 2>&1; pack r1
r=(); for ((i=${#s[@]}-1; i>=0; i--)); do r+=("${s[$i]}"); done
scripts/sweep-rows $o/r2 $d/stream.json "${r[@]}" > $o/r2.txt 2>&1; pack r2
pack done
rm -rf $o
