#!/usr/bin/env bash
# Held rows, call 4: held row pairs (BANDJIT_ROW_PAIRS=1 with BANDJIT_ROW_HELD=1: a thread
# holds the same pieces of two rows, a masked pair being two heads of one query that share
# the mask's bits; one exchange for both) against the default, two interleaved rounds, after
# `check` of the pair kernels under both measured layouts.
d=bench/results/2026-12-04-held-rows
o=$OUT/h4; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/h4.tgz -C $OUT h4; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
export BANDJIT_CACHE_DIR=/tmp/cache-h4
s=(default "BANDJIT_ROW_PAIRS=1 BANDJIT_ROW_HELD=1"
   "BANDJIT_ROW_PAIRS=1 BANDJIT_ROW_HELD=1 BANDJIT_ROW_PIECES=2 BANDJIT_ROW_BLOCK_THREADS=512"
   "BANDJIT_ROW_PAIRS=1 BANDJIT_ROW_HELD=1 BANDJIT_ROW_PIECES=2 BANDJIT_ROW_BLOCK_THREADS=1024")
CHECK_SHAPES="$d/chk-pairs.json" timeout 150 scripts/sweep-rows $o/check $d/sm16.json "${s[1]}" "${s[2]}" > $o/check.txt 2>&1; pack check
for r in a b; do timeout 150 scripts/sweep-rows $o/$r $d/sm16.json "${s[@]}" > $o/$r.txt 2>&1; pack $r; done
rm -rf $o
