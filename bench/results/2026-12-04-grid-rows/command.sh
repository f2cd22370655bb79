#!/usr/bin/env bash
# Call 1 (carry build/bandjit of 6cf87a2 and .scratch/grid): the grid-wide layer_norm harness
# (.scratch/grid/harness, built on the build machine
# by build.sh), then `bandjit bench` of the same problem as generated, in the same call.
o=$OUT/c1; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c1.tgz -C $OUT c1; }
export BANDJIT_CACHE_DIR=/tmp/c1-cache
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
timeout 120 .scratch/grid/harness > $o/harness.txt 2>&1; echo "exit $?" >> $o/harness.txt; pack harness
s=.scratch/grid/ln-16bit-65536.json
build/bandjit pregenerate --shapes $s > $o/pregenerate.txt 2>&1
timeout 120 build/bandjit bench --shapes $s > $o/bench.txt 2>&1; pack bench
timeout 120 .scratch/grid/harness > $o/harness-2.txt 2>&1; echo "exit $?" >> $o/harness-2.txt
pack done
rm -rf $o
