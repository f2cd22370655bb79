#!/usr/bin/env bash
# Second call (carry build/bandjit, same binary as command.sh): the 16-bit H = 65536 forward
# in row pairs (each weight and bias read once for two rows) under four layouts, against the
# default, two rounds in alternating order.
d=bench/results/2026-12-03-weight-prefetch
o=$OUT/c2; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c2.tgz -C $OUT c2; }
export BANDJIT_SOURCE_DIR=$PWD
s=("default" "BANDJIT_ROW_PAIRS=1" "BANDJIT_ROW_PAIRS=1 BANDJIT_ROW_BLOCK_THREADS=512"
   "BANDJIT_ROW_PAIRS=1 BANDJIT_ROW_REGISTERS=32 BANDJIT_ROW_BLOCK_THREADS=512"
   "BANDJIT_ROW_PAIRS=1 BANDJIT_ROW_REGISTERS=32 BANDJIT_ROW_BLOCK_THREADS=1024")
scripts/sweep-rows $o/r1 $d/pairs.json "${s[@]}" > $o/r1.txt 2>&1; pack r1
scripts/sweep-rows $o/r2 $d/pairs.json "${s[4]}" "${s[3]}" "${s[2]}" "${s[1]}" "${s[0]}" > $o/r2.txt 2>&1; pack r2
pack done
rm -rf $o
