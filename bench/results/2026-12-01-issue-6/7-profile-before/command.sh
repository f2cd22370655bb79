#!/usr/bin/env bash
# ncu profile of sliding_window_attention (Hopper kernel), float16: B=12 N=4096 w=256 and B=1 N=32768 w=512
o=$OUT/prof; mkdir -p $o
export BANDJIT_CACHE_DIR=/tmp/c BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
B12='{"batch":12,"heads":12,"seq_len":4096,"head_dim":64,"window_left":256,"window_right":256,"dilation":1,"dtype":"float16","layout":"bnhd","ops":["sliding_window_attention"]}'
N32='{"batch":1,"heads":12,"seq_len":32768,"head_dim":64,"window_left":512,"window_right":512,"dilation":1,"dtype":"float16","layout":"bnhd","ops":["sliding_window_attention"]}'
nvidia-smi > $o/smi.txt 2>&1
for P in "$B12" "$N32"; do build/bandjit bench --problem "$P" --runs 30 >> $o/bench.txt 2>&1; done
cat $o/bench.txt | grep -i sliding
M=""
for r in barrier long_scoreboard short_scoreboard mio_throttle lg_throttle math_pipe_throttle wait not_selected selected dispatch_stall no_instruction branch_resolving membar sleeping tex_throttle drain imc_miss misc; do M="$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"; done
M=${M#,}
i=0
for P in "$B12" "$N32"; do
  i=$((i+1))
  timeout 150 ncu --clock-control none -k regex:sliding -s 3 -c 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis --section InstructionStats --metrics "$M,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.avg.pct_of_peak_sustained_elapsed" build/bandjit bench --problem "$P" --runs 3 > $o/ncu-$i.txt 2>&1
  grep -E "Duration|Throughput|gmma|pipe_xu|stalled|Registers|Achieved Occ|Issue|lsu_wave|lts__t_sec|Warp Cycles" $o/ncu-$i.txt | head -70
done
tar czf $OUT/prof.tgz -C $OUT prof
