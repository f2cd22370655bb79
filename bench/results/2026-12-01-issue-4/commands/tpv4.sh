#!/usr/bin/env bash
o=$OUT/tpv4; mkdir -p $o
pack() { tar czf $OUT/tpv4.tgz -C $OUT tpv4; }
export BANDJIT_CACHE_DIR=$(mktemp -d) BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
for cfg in default 192_32_4 256_32_3 64_32_4 128_32_3; do
  if [ $cfg = default ]; then unset BANDJIT_TPV_TILING; else export BANDJIT_TPV_TILING=${cfg//_/,}; fi
  timeout 60 build/bandjit bench --shapes .scratch/tpv-shapes.json --runs 30 --json $o/bench-$cfg.json > $o/bench-$cfg.txt 2>&1; pack
done
unset BANDJIT_TPV_TILING
P='{"batch":1,"heads":12,"seq_len":4096,"head_dim":64,"window_left":256,"window_right":256,"dilation":1,"dtype":"float16","layout":"bnhd","ops":["band_tpv"]}'
timeout 120 ncu --clock-control none -k bandjit_band_tpv -s 3 -c 1 --set full build/bandjit bench --problem "$P" --runs 3 > $o/ncu-tpv-full.txt 2>&1; pack
( time build/bandjit pregenerate -j 16 --ops band_tpv --shapes tests/shapes/edge-cases.json shapes/*.json ) > $o/pregenerate.txt 2>&1; pack
timeout 150 build/bandjit check --ops band_tpv --shapes tests/shapes/edge-cases.json shapes/*.json --json $o/check-tpv.json > $o/check-tpv.txt 2>&1; echo "exit $?" >> $o/check-tpv.txt; pack
timeout 100 build/tests/bandjit_gpu_tests "[band_tpv]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack
