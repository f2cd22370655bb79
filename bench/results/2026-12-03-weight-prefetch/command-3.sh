#!/usr/bin/env bash
# Third call (carry build/bandjit: the L1 prefetch knob replaced by weights ahead): the 16-bit
# H = 65536 forward with the first pieces' weight and bias loaded into registers before the
# row's statistics (BANDJIT_ROW_WEIGHT_AHEAD=pieces, _LATE=1: between the cluster barrier's
# arrive and wait), and with more registers a thread (BANDJIT_ROW_SM_THREADS=768: 80, 512: 128),
# against the default, two rounds in opposite order.
d=bench/results/2026-12-03-weight-prefetch
o=$OUT/c3; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c3.tgz -C $OUT c3; }
export BANDJIT_SOURCE_DIR=$PWD
s=("default" "BANDJIT_ROW_WEIGHT_AHEAD=1" "BANDJIT_ROW_WEIGHT_AHEAD=1 BANDJIT_ROW_WEIGHT_AHEAD_LATE=1"
   "BANDJIT_ROW_SM_THREADS=768" "BANDJIT_ROW_SM_THREADS=768 BANDJIT_ROW_WEIGHT_AHEAD=2"
   "BANDJIT_ROW_SM_THREADS=768 BANDJIT_ROW_WEIGHT_AHEAD=2 BANDJIT_ROW_WEIGHT_AHEAD_LATE=1"
   "BANDJIT_ROW_SM_THREADS=512" "BANDJIT_ROW_SM_THREADS=512 BANDJIT_ROW_WEIGHT_AHEAD=4")
scripts/sweep-rows $o/r1 $d/pairs.json "${s[@]}" > $o/r1.txt 2>&1; pack r1
r=(); for ((i=${#s[@]}-1; i>=0; i--)); do r+=("${s[$i]}"); done
scripts/sweep-rows $o/r2 $d/pairs.json "${r[@]}" > $o/r2.txt 2>&1; pack r2
pack done
rm -rf $o
