#!/usr/bin/env bash
# Mailbox call 4 (carry build/bandjit and build/tests/bandjit_gpu_tests of 780fb93: the review's
# block barrier before a later round, which no kernel takes, and comments): GPU tests of the
# two families, `check` of the long rows.
o=$OUT/m4; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/m4.tgz -C $OUT m4; }
export BANDJIT_CACHE_DIR=/tmp/cache-m4
timeout 140 build/tests/bandjit_gpu_tests "[layer_norm],[softmax]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack gpu-tests
timeout 60 build/bandjit check --timing-runs 1 --shapes .scratch/mb/ln-long.json .scratch/mb/sm-long.json > $o/check.txt 2>&1; echo "exit $?" >> $o/check.txt
pack done
rm -rf $o
