#!/usr/bin/env bash
o=$OUT/tpv3; mkdir -p $o
pack() { tar czf $OUT/tpv3.tgz -C $OUT tpv3; }
export BANDJIT_CACHE_DIR=$(mktemp -d) BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
( time build/bandjit pregenerate -j 16 --ops band_tpv attention_backward --shapes tests/shapes/edge-cases.json shapes/*.json bench/shapes/issue-4.json ) > $o/pregenerate.txt 2>&1; pack
timeout 100 build/bandjit bench --shapes .scratch/tpv-shapes.json --runs 30 --json $o/bench-tpv.json > $o/bench-tpv.txt 2>&1; pack
P='{"batch":1,"heads":12,"seq_len":4096,"head_dim":64,"window_left":256,"window_right":256,"dilation":1,"dtype":"float16","layout":"bnhd","ops":["band_tpv"]}'
timeout 120 ncu --clock-control none -k bandjit_band_tpv -s 3 -c 1 --set full build/bandjit bench --problem "$P" --runs 3 > $o/ncu-tpv-full.txt 2>&1; pack
timeout 150 build/bandjit check --ops band_tpv --shapes tests/shapes/edge-cases.json shapes/*.json --json $o/check-tpv.json > $o/check-tpv.txt 2>&1; echo "exit $?" >> $o/check-tpv.txt; pack
timeout 150 build/tests/bandjit_gpu_tests "[band_tpv],[attention_backward]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack
