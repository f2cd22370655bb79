#!/usr/bin/env bash
# band_tpv Hopper path: Nsight Compute of the seed kernel (throughput, stalls), and 256-row tile / stage variants
o=$OUT/w2; mkdir -p $o
pack() { tar czf $OUT/w2.tgz -C $OUT w2; }
export BANDJIT_CACHE_DIR=$(mktemp -d) BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
P='{"batch":1,"heads":12,"seq_len":4096,"head_dim":64,"window_left":256,"window_right":256,"dilation":1,"dtype":"float16","layout":"bnhd","ops":["band_tpv"]}'
P12='{"batch":12,"heads":12,"seq_len":4096,"head_dim":64,"window_left":256,"window_right":256,"dilation":1,"dtype":"float16","layout":"bnhd","ops":["band_tpv"]}'
build/bandjit bench --problem "$P" --problem "$P12" --runs 30 > $o/bench-default.txt 2>&1
for t in 256,32,3 256,32,4 256,32,2 128,32,3 128,64,3; do
  BANDJIT_TPV_TILING=$t timeout 30 build/bandjit bench --problem "$P" --problem "$P12" --runs 30 > $o/bench-tiling-$t.txt 2>&1
done
pack
M=""
for r in barrier long_scoreboard short_scoreboard mio_throttle lg_throttle math_pipe_throttle wait not_selected selected dispatch_stall no_instruction branch_resolving membar sleeping misc; do M="$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"; done
M=${M#,}
timeout 100 ncu --clock-control none -k bandjit_band_tpv -s 3 -c 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --metrics "$M,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,lts__t_sectors.sum,lts__t_bytes.sum.per_second,dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum" build/bandjit bench --problem "$P" --runs 3 > $o/ncu-seed.txt 2>&1
pack
