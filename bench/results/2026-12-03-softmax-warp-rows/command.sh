#!/usr/bin/env bash
# One call on the H200 (carry build/bandjit, build/tests/bandjit_gpu_tests, built from the
# commit with 128-thread forward blocks for rows within a warp): issue 7's rows record —
# GPU tests, `check` over tests/shapes/softmax.json and layer-norm.json, `bench` beside
# PyTorch on both issue files.
STEP_LIMIT=200 scripts/gpu-record $OUT/rec rows > $OUT/gpu-record.txt 2>&1
mv $OUT/gpu-record.txt $OUT/rec/ && tar czf $OUT/rec.tgz -C $OUT rec && rm -rf $OUT/rec
