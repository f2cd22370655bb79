#!/usr/bin/env bash
# band_tpv tiling sweep (BANDJIT_TPV_TILING) on the issue-4 problems
o=$OUT/tpv2; mkdir -p $o
pack() { tar czf $OUT/tpv2.tgz -C $OUT tpv2; }
export BANDJIT_CACHE_DIR=$(mktemp -d) BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
S=.scratch/tpv-shapes.json
for cfg in default 64,32,4 64,32,3 128,32,4 128,32,3 64,64,3 128,64,3 64,64,2; do
  if [ $cfg = default ]; then unset BANDJIT_TPV_TILING; else export BANDJIT_TPV_TILING=$cfg; fi
  timeout 60 build/bandjit bench --shapes $S --runs 30 --json $o/bench-$cfg.json > $o/bench-$cfg.txt 2>&1; pack
done
for cfg in 128,32,4 64,64,3; do
  export BANDJIT_TPV_TILING=$cfg
  timeout 60 build/bandjit check --ops band_tpv --shapes tests/shapes/edge-cases.json > $o/check-$cfg.txt 2>&1; echo "exit $?" >> $o/check-$cfg.txt; pack
done
unset BANDJIT_TPV_TILING
P='{"batch":1,"heads":12,"seq_len":4096,"head_dim":64,"window_left":256,"window_right":256,"dilation":1,"dtype":"float16","layout":"bnhd","ops":["band_tpv"]}'
timeout 100 ncu --clock-control none -k bandjit_band_tpv -s 3 -c 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section InstructionStats --section MemoryWorkloadAnalysis build/bandjit bench --problem "$P" --runs 3 > $o/ncu-tpv.txt 2>&1; pack
