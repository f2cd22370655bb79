#!/usr/bin/env bash
# One call on the H200 (carry build/bandjit: the reduction of 2026-12-03-softmax-reduction):
# the 16-bit long-row softmax forward under the row layout knobs, now that the row's
# reduction is shuffles rather than a chain of combines.
o=$OUT/long-rows; mkdir -p $o
export BANDJIT_CACHE_DIR=$(mktemp -d)
timeout 500 scripts/sweep-rows $o/sweep bench/results/2026-12-03-softmax-long-rows/shapes.json default \
  "BANDJIT_ROW_STAGED=1" "BANDJIT_ROW_STAGED=0" \
  "BANDJIT_ROW_BLOCK_THREADS=512" "BANDJIT_ROW_BLOCK_THREADS=1024" \
  "BANDJIT_ROW_STAGED=1 BANDJIT_ROW_BLOCK_THREADS=512" "BANDJIT_ROW_STAGED=1 BANDJIT_ROW_BLOCK_THREADS=1024" \
  "BANDJIT_ROW_STAGED=0 BANDJIT_ROW_BLOCK_THREADS=512" "BANDJIT_ROW_STAGED=0 BANDJIT_ROW_BLOCK_THREADS=1024" \
  "BANDJIT_ROW_PIECES=2" "BANDJIT_ROW_PIECES=2 BANDJIT_ROW_BLOCK_THREADS=512" \
  "BANDJIT_ROW_REGISTERS=16 BANDJIT_ROW_BLOCK_THREADS=1024" > $o/sweep.log 2>&1
tar czf $OUT/long-rows.tgz -C $OUT long-rows && rm -rf $o
