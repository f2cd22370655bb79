#!/usr/bin/env bash
# band_tpv v2 (per-lane staging): correctness and timing on the H200
o=$OUT/tpv1; mkdir -p $o
pack() { tar czf $OUT/tpv1.tgz -C $OUT tpv1; }
export BANDJIT_CACHE_DIR=$(mktemp -d) BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
( time build/bandjit pregenerate -j 16 --ops band_tpv attention_backward --shapes tests/shapes/edge-cases.json shapes/*.json bench/shapes/issue-4.json ) > $o/pregenerate.txt 2>&1; pack
timeout 120 build/bandjit bench --shapes bench/shapes/issue-4.json --runs 30 --json $o/bench-issue-4.json > $o/bench-issue-4.txt 2>&1; pack
timeout 150 build/tests/bandjit_gpu_tests "[band_tpv],[attention_backward]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack
timeout 150 build/bandjit check --ops band_tpv --shapes tests/shapes/edge-cases.json shapes/*.json --json $o/check-tpv.json > $o/check-tpv.txt 2>&1; echo "exit $?" >> $o/check-tpv.txt; pack
P='{"batch":1,"heads":12,"seq_len":4096,"head_dim":64,"window_left":256,"window_right":256,"dilation":1,"dtype":"float16","layout":"bnhd","ops":["band_tpv"]}'
timeout 100 ncu --clock-control none -k bandjit_band_tpv -s 3 -c 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section InstructionStats --section MemoryWorkloadAnalysis build/bandjit bench --problem "$P" --runs 3 > $o/ncu-tpv.txt 2>&1; pack
python3 .scratch/regs.py $BANDJIT_CACHE_DIR > $o/regs.txt 2>&1; pack
