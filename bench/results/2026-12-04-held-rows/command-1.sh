#!/usr/bin/env bash
# Held rows, call 1: held (BANDJIT_ROW_HELD=1) 16-bit softmax forwards under several layouts
# against the default (staged) at L = 16384 … 65536; `check` of held rows; layer_norm 16-bit
# H = 65536 under sweep-rows' layouts (mailbox era).
o=$OUT/h1; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/h1.tgz -C $OUT h1; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
export BANDJIT_CACHE_DIR=/tmp/cache-h1
CHECK_SHAPES="bench/results/2026-12-04-held-rows/chk.json bench/results/2026-12-04-held-rows/sm16.json" timeout 200 scripts/sweep-rows $o/check bench/results/2026-12-04-held-rows/sm16.json \
  "BANDJIT_ROW_HELD=1 BANDJIT_ROW_BLOCK_THREADS=256" > $o/check.txt 2>&1; pack check
timeout 300 scripts/sweep-rows $o/sm bench/results/2026-12-04-held-rows/sm16.json default \
  "BANDJIT_ROW_HELD=1 BANDJIT_ROW_BLOCK_THREADS=256" \
  "BANDJIT_ROW_HELD=1 BANDJIT_ROW_BLOCK_THREADS=512" "BANDJIT_ROW_HELD=1 BANDJIT_ROW_BLOCK_THREADS=1024" \
  "BANDJIT_ROW_HELD=1 BANDJIT_ROW_PIECES=4 BANDJIT_ROW_BLOCK_THREADS=256" \
  "BANDJIT_ROW_HELD=1 BANDJIT_ROW_PIECES=4 BANDJIT_ROW_BLOCK_THREADS=512" \
  "BANDJIT_ROW_HELD=1 BANDJIT_ROW_PIECES=4 BANDJIT_ROW_BLOCK_THREADS=1024" BANDJIT_ROW_HELD=0 > $o/sm.txt 2>&1; pack sm
timeout 240 scripts/sweep-rows $o/ln bench/results/2026-12-04-held-rows/ln16.json > $o/ln.txt 2>&1; pack ln
rm -rf $o
