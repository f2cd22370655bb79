#!/usr/bin/env bash
# ncu profile of the seed problem's band_tpv (and band_pv, band_qk) float16
set -x
o=$OUT/prof; mkdir -p $o
export BANDJIT_CACHE_DIR=$(mktemp -d)
P='{"batch":1,"heads":12,"seq_len":4096,"head_dim":64,"window_left":256,"window_right":256,"dilation":1,"dtype":"float16","layout":"bnhd","ops":["band_tpv","band_pv","band_qk"]}'
nvidia-smi > $o/smi.txt 2>&1
build/bandjit bench --problem "$P" --runs 30 > $o/bench.txt 2>&1
python3 .scratch/regs.py $BANDJIT_CACHE_DIR > $o/regs.txt 2>&1
for k in bandjit_band_tpv bandjit_band_pv bandjit_band_qk; do
timeout 150 ncu --clock-control none -k $k -s 3 -c 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis --section InstructionStats build/bandjit bench --problem "$P" --runs 3 > $o/ncu-$k.txt 2>&1
done
tar czf $OUT/prof.tgz -C $OUT prof
