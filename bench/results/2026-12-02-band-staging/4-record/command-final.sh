#!/usr/bin/env bash
# One call (the device was hard to get: this replaced two longer scripts that never got a
# machine). 8201dcd (whole P rows for bands
# of ≤ 129 diagonals, rows an odd number of 16-byte units apart) as build/bandjit and
# build/tests/bandjit_gpu_tests; .scratch/bandjit-pvchunk = the same + one cp.async group per
# slab (pv-chunked.patch). Outputs in $OUT/r7.tgz.
#  1. GPU tests [band_pv]; check --ops band_pv of the edge cases and the narrow-band problems
#     of the shape files (charlm, grid-narrow.json);
#  2. narrow bands (16 problems): the default against BANDJIT_PV_WHOLE_ROWS=0 (slabs);
#  3. wide bands with whole rows forced (=1): 8201dcd against the per-slab groups (last, so
#     a short device allowance cuts the experiment, not the record).
R=bench/results/2026-12-02-band-staging/4-record; o=$OUT/r7; mkdir -p $o
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CACHE_DIR=/tmp/bandjit-final
pack() { tar czf $OUT/r7.tgz -C $OUT r7; }
C=$(mktemp -d)
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > $o/gpu.txt 2>&1
build/bandjit pregenerate -j 16 --ops training --shapes $R/narrow-shapes.json >> $o/pregenerate.txt 2>&1
BANDJIT_PV_WHOLE_ROWS=0 build/bandjit pregenerate -j 16 --ops training --shapes $R/narrow-shapes.json >> $o/pregenerate.txt 2>&1
build/bandjit pregenerate -j 16 --ops band_pv --shapes tests/shapes/edge-cases.json shapes/longformer-charlm-small.json $R/grid-narrow.json >> $o/pregenerate.txt 2>&1
timeout 120 build/tests/bandjit_gpu_tests "[band_pv]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt
pack
timeout 150 build/bandjit check --ops band_pv --shapes tests/shapes/edge-cases.json shapes/longformer-charlm-small.json $R/grid-narrow.json --json $o/check-pv.json > $o/check-pv.txt 2>&1; echo "exit $?" >> $o/check-pv.txt
pack
timeout 80 build/bandjit bench --runs 50 --shapes $R/narrow-shapes.json --json $o/narrow.json > $o/narrow.txt 2>&1
BANDJIT_PV_WHOLE_ROWS=0 timeout 80 build/bandjit bench --runs 50 --shapes $R/narrow-shapes.json --json $o/narrow-w0.json > $o/narrow-w0.txt 2>&1
pack
BANDJIT_PV_WHOLE_ROWS=1 build/bandjit pregenerate -j 16 --ops training --shapes $R/wide-shapes.json >> $o/pregenerate.txt 2>&1
BANDJIT_PV_WHOLE_ROWS=1 .scratch/bandjit-pvchunk pregenerate -j 16 --ops training --cache-dir $C --shapes $R/wide-shapes.json >> $o/pregenerate.txt 2>&1
BANDJIT_PV_WHOLE_ROWS=1 timeout 60 build/bandjit bench --runs 50 --shapes $R/wide-shapes.json > $o/wide-w1.txt 2>&1
BANDJIT_PV_WHOLE_ROWS=1 timeout 60 .scratch/bandjit-pvchunk bench --runs 50 --cache-dir $C --shapes $R/wide-shapes.json > $o/wide-w1-chunked.txt 2>&1
pack
