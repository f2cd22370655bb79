#!/usr/bin/env bash
# band_softmax: the scale folded into the exponent (fewer instructions an element), against
# HEAD's binary (.scratch/bandjit-head) in one run; 16-lane rows (BANDJIT_ROW_PIECES=8);
# GPU tests and check of band_softmax; Nsight Compute instruction counts on the seed.
o=$OUT/bs1; mkdir -p $o
pack() { tar czf $OUT/bs1.tgz -C $OUT bs1; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
A=$(mktemp -d); B=$(mktemp -d); C=$(mktemp -d)
R=.scratch/record-shapes.json
S="tests/shapes/edge-cases.json shapes/longformer-base-4096.json shapes/longformer-charlm-small.json shapes/longformer-large-4096.json"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
BANDJIT_CACHE_DIR=$A .scratch/bandjit-head pregenerate -j 16 --ops training --shapes $R > $o/pregenerate-head.txt 2>&1 &
BANDJIT_CACHE_DIR=$B build/bandjit pregenerate -j 16 --ops training --shapes $R $S > $o/pregenerate.txt 2>&1 &
BANDJIT_ROW_PIECES=8 BANDJIT_CACHE_DIR=$C build/bandjit pregenerate -j 16 --ops training --shapes $R > $o/pregenerate-r16.txt 2>&1
wait
for round in 1 2; do
  BANDJIT_CACHE_DIR=$A timeout 90 .scratch/bandjit-head bench --shapes $R --runs 30 --json $o/bench-head-$round.json > $o/bench-head-$round.txt 2>&1
  BANDJIT_CACHE_DIR=$B timeout 90 build/bandjit bench --shapes $R --runs 30 --json $o/bench-new-$round.json > $o/bench-new-$round.txt 2>&1
  BANDJIT_ROW_PIECES=8 BANDJIT_CACHE_DIR=$C timeout 90 build/bandjit bench --shapes $R --runs 30 --json $o/bench-r16-$round.json > $o/bench-r16-$round.txt 2>&1
done
pack
BANDJIT_CACHE_DIR=$B timeout 120 build/tests/bandjit_gpu_tests "[band_softmax]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack
BANDJIT_CACHE_DIR=$B timeout 120 build/bandjit check --ops band_softmax --shapes $S --json $o/check.json > $o/check.txt 2>&1; echo "exit $?" >> $o/check.txt; pack
BANDJIT_ROW_PIECES=8 BANDJIT_CACHE_DIR=$C timeout 120 build/bandjit check --ops band_softmax --shapes $S --json $o/check-r16.json > $o/check-r16.txt 2>&1; echo "exit $?" >> $o/check-r16.txt; pack
M=smsp__inst_executed.sum,smsp__issue_active.avg.per_cycle_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
echo '{"problems": [{"batch":1,"heads":12,"seq_len":4096,"head_dim":64,"window_left":256,"window_right":256,"dtype":"float16"}]}' > /tmp/seed.json
BANDJIT_CACHE_DIR=$A timeout 60 ncu --clock-control none -k regex:'bandjit_band_softmax$' -s 2 -c 1 --metrics $M .scratch/bandjit-head bench --shapes /tmp/seed.json --runs 3 > $o/ncu-head.txt 2>&1
BANDJIT_CACHE_DIR=$B timeout 60 ncu --clock-control none -k regex:'bandjit_band_softmax$' -s 2 -c 1 --metrics $M build/bandjit bench --shapes /tmp/seed.json --runs 3 > $o/ncu-new.txt 2>&1
BANDJIT_ROW_PIECES=8 BANDJIT_CACHE_DIR=$C timeout 60 ncu --clock-control none -k regex:'bandjit_band_softmax$' -s 2 -c 1 --metrics $M build/bandjit bench --shapes /tmp/seed.json --runs 3 > $o/ncu-r16.txt 2>&1
pack
