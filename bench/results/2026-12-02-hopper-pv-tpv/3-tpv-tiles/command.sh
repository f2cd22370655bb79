#!/usr/bin/env bash
# band_tpv Hopper path with the products awaited one slab later: 128- against 192-row tiles, 3 and 4 stages
o=$OUT/w3; mkdir -p $o
pack() { tar czf $OUT/w3.tgz -C $OUT w3; }
export BANDJIT_CACHE_DIR=$(mktemp -d) BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
build/bandjit pregenerate -j 16 --shapes .scratch/tpv-shapes.json > $o/pregenerate.txt 2>&1
build/bandjit bench --shapes .scratch/tpv-shapes.json --runs 30 > $o/bench-default.txt 2>&1
for t in 192,32,3 192,32,4 128,32,4 256,32,3 192,32,2; do
  BANDJIT_TPV_TILING=$t timeout 40 build/bandjit bench --shapes .scratch/tpv-shapes.json --runs 30 > $o/bench-tiling-${t//,/-}.txt 2>&1
done
BANDJIT_TPV_WGMMA=0 timeout 40 build/bandjit bench --shapes .scratch/tpv-shapes.json --runs 30 > $o/bench-mma.txt 2>&1
pack
for t in 128,32,3 192,32,3; do
BANDJIT_TPV_TILING=$t timeout 60 build/tests/bandjit_gpu_tests "[band_tpv]" > $o/gpu-tests-${t//,/-}.txt 2>&1; echo "exit $?" >> $o/gpu-tests-${t//,/-}.txt
BANDJIT_TPV_TILING=$t timeout 60 build/bandjit check --ops band_tpv --shapes tests/shapes/edge-cases.json .scratch/tpv-shapes.json > $o/check-tpv-${t//,/-}.txt 2>&1; echo "exit $?" >> $o/check-tpv-${t//,/-}.txt
done
pack
