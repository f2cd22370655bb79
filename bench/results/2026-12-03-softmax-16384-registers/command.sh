#!/usr/bin/env bash
# One call on the H200 (carry build/bandjit, build/tests/bandjit_gpu_tests, built from the
# commit that keeps unmasked 16-bit L = 16384 rows in registers):
#  1. scripts/sweep-rows on shapes.json (L = 16384, 32768 — not measured before — and 65536)
#     with the defaults, staging off and staging on;
#  2. scripts/gpu-record OUT/rec rows (GPU tests, check, bench beside PyTorch).
export BANDJIT_CACHE_DIR=$(mktemp -d)
timeout 200 scripts/sweep-rows $OUT/rec-sweep bench/results/2026-12-03-softmax-16384-registers/shapes.json \
  default "BANDJIT_ROW_STAGED=0" "BANDJIT_ROW_STAGED=1" > $OUT/sweep.log 2>&1
mkdir -p $OUT/rec && mv $OUT/sweep.log $OUT/rec-sweep $OUT/rec/ && tar czf $OUT/rec.tgz -C $OUT rec
STEP_LIMIT=200 scripts/gpu-record $OUT/rec rows > $OUT/gpu-record.txt 2>&1
mv $OUT/gpu-record.txt $OUT/rec/ && tar czf $OUT/rec.tgz -C $OUT rec && rm -rf $OUT/rec
