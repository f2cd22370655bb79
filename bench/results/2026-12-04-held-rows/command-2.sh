#!/usr/bin/env bash
# Held rows, call 2: two interleaved rounds of the 16-bit softmax forwards at L = 16384 … 65536,
# default against held layouts (BANDJIT_ROW_HELD=1 with 2 or 4 pieces a thread, 256 or 512
# threads a block).
o=$OUT/h2; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/h2.tgz -C $OUT h2; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
export BANDJIT_CACHE_DIR=/tmp/cache-h2
s=(default "BANDJIT_ROW_HELD=1 BANDJIT_ROW_PIECES=4 BANDJIT_ROW_BLOCK_THREADS=256"
   "BANDJIT_ROW_HELD=1 BANDJIT_ROW_PIECES=4 BANDJIT_ROW_BLOCK_THREADS=512"
   "BANDJIT_ROW_HELD=1 BANDJIT_ROW_PIECES=2 BANDJIT_ROW_BLOCK_THREADS=256"
   "BANDJIT_ROW_HELD=1 BANDJIT_ROW_PIECES=2 BANDJIT_ROW_BLOCK_THREADS=512"
   "BANDJIT_ROW_HELD=1 BANDJIT_ROW_PIECES=8 BANDJIT_ROW_BLOCK_THREADS=256")
for r in a b c; do timeout 170 scripts/sweep-rows $o/$r bench/results/2026-12-04-held-rows/sm16.json "${s[@]}" > $o/$r.txt 2>&1; pack $r; done
rm -rf $o
