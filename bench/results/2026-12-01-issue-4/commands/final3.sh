#!/usr/bin/env bash
# Final record of band_tpv at 0e50d2c: checks, GPU tests, bandjit beside its peers on issue 4's problems, two more tilings, instruction mix
o=$OUT/final3; mkdir -p $o
pack() { tar czf $OUT/final3.tgz -C $OUT final3; }
export BANDJIT_CACHE_DIR=$(mktemp -d) BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
( time build/bandjit pregenerate -j 16 --ops training --shapes tests/shapes/edge-cases.json shapes/*.json bench/shapes/issue-4.json .scratch/tpv-shapes.json ) > $o/pregenerate.txt 2>&1; pack
timeout 200 scripts/bench $o/bench-issue-4 bench/shapes/issue-4.json > $o/bench-issue-4.txt 2>&1; echo "exit $?" >> $o/bench-issue-4.txt; pack
for t in 128,64,2 128,32,3; do BANDJIT_TPV_TILING=$t timeout 60 build/bandjit bench --shapes .scratch/tpv-shapes.json --runs 30 --json $o/bench-tpv-tiling-${t//,/_}.json > $o/bench-tpv-tiling-${t//,/_}.txt 2>&1; done; pack
timeout 240 build/tests/bandjit_gpu_tests "[band_tpv],[attention_backward]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack
timeout 120 build/bandjit check --ops band_tpv --shapes tests/shapes/edge-cases.json shapes/*.json --json $o/check-tpv.json > $o/check-tpv.txt 2>&1; echo "exit $?" >> $o/check-tpv.txt; pack
timeout 120 build/bandjit check --ops attention_backward --shapes tests/shapes/edge-cases.json --json $o/check-backward.json > $o/check-backward.txt 2>&1; echo "exit $?" >> $o/check-backward.txt; pack
P='{"batch":1,"heads":12,"seq_len":4096,"head_dim":64,"window_left":256,"window_right":256,"dilation":1,"dtype":"float16","layout":"bnhd","ops":["band_tpv"]}'
timeout 60 ncu --clock-control none -k bandjit_band_tpv -s 3 -c 1 --section InstructionStats --section WarpStateStats build/bandjit bench --problem "$P" --runs 3 > $o/ncu-instruction-mix.txt 2>&1; pack
