#!/usr/bin/env bash
# On the H200 (cd .scratch/qkx = this folder with bin/ built): each variant's median and check; traces; Nsight Compute of qk_base and pv_base.
cd "$(dirname "$0")"
o=$OUT/r1; mkdir -p $o
pack() { tar czf $OUT/r1.tgz -C $OUT r1; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
for v in qk_base qk_nowrite qk_nostore qk_nomma qk_nok qk_writeonly qk_threads qk_computeonly pv_base pv_nomma pv_nop pv_nov pv_noout pv_ponly qk_base pv_base; do
  timeout 60 bin/$v 50 >> $o/times.txt 2>&1
done
for v in qk_trace qk_writeonly_trace qk_nowrite_trace pv_trace pv_ponly_trace; do OUT=$o timeout 60 bin/$v 50 >> $o/times.txt 2>&1; done
pack
M=""
for r in barrier long_scoreboard short_scoreboard mio_throttle lg_throttle math_pipe_throttle wait not_selected selected dispatch_stall no_instruction branch_resolving membar sleeping misc; do M="$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"; done
M=${M#,}
for v in qk_base pv_base; do
timeout 120 ncu --clock-control none -k regex:bandjit_band -s 5 -c 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section SchedulerStats --metrics "$M,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,lts__t_sectors.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active" bin/$v 5 > $o/ncu-$v.txt 2>&1
done
pack
rm -rf $o
