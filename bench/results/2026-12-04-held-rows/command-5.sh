#!/usr/bin/env bash
# Held rows, call 5 (carry build/bandjit of the reviewed code: held rows the sm_90a build's
# alone, with its own launch; two more shapes in tests/shapes/softmax.json): the 16-bit long
# rows twice, issue 7's softmax set beside PyTorch, `check` of tests/shapes/softmax.json (what
# the GPU test [softmax] runs: the tests binary no longer fits the tool's 64 MiB beside the
# tracked results), the edge cases, issue 7's softmax set and the long rows.
d=bench/results/2026-12-04-held-rows
o=$OUT/h5; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/h5.tgz -C $OUT h5; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
export BANDJIT_CACHE_DIR=/tmp/cache-h5
f="tests/shapes/edge-cases.json bench/shapes/issue-7-softmax.json $d/sm16.json"
build/bandjit pregenerate -j 16 --shapes $f tests/shapes/softmax.json > $o/pregenerate.txt 2>&1; pack pregenerate
for r in 1 2; do timeout 60 build/bandjit bench --shapes $d/sm16.json --json $o/long-$r.json > $o/long-$r.txt 2>&1; pack long-$r; done
timeout 150 scripts/bench-rows $o/rows-softmax softmax > $o/rows-softmax.txt 2>&1; pack rows-softmax
timeout 240 build/bandjit check --timing-runs 1 --shapes tests/shapes/softmax.json $f --json $o/check.json > $o/check.txt 2>&1; echo "exit $?" >> $o/check.txt
pack done
rm -rf $o
