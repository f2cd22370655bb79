#!/usr/bin/env bash
# Second call (carry build/bandjit as for command.sh): issue 7's softmax forward rows
# (../2026-12-03-softmax-reduction/forward.json) under the defaults and with 128-thread
# blocks (BANDJIT_ROW_BLOCK_THREADS=128), twice each, alternating.
o=$OUT/rec2; mkdir -p $o
export BANDJIT_CACHE_DIR=$(mktemp -d)
F=bench/results/2026-12-03-softmax-reduction/forward.json
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/rec2.tgz -C $OUT rec2; }
build/bandjit pregenerate -j 16 --shapes $F > $o/pregenerate.txt 2>&1
BANDJIT_ROW_BLOCK_THREADS=128 build/bandjit pregenerate -j 16 --shapes $F > $o/pregenerate-128.txt 2>&1
for run in 1 2; do
  timeout 60 build/bandjit bench --shapes $F --json $o/default-$run.json > $o/default-$run.txt 2>&1; pack default-$run
  BANDJIT_ROW_BLOCK_THREADS=128 timeout 60 build/bandjit bench --shapes $F --json $o/t128-$run.json \
    > $o/t128-$run.txt 2>&1; pack t128-$run
done
rm -rf $o
