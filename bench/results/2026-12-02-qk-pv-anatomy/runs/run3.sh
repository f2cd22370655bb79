#!/usr/bin/env bash
# On the H200 (cd .scratch/qkx = this folder with bin/ built): band_qk with S in per-tile slots written out during the next tile's products.
cd "$(dirname "$0")"
o=$OUT/r3; mkdir -p $o
pack() { tar czf $OUT/r3.tgz -C $OUT r3; }
for v in qk_base qk_slots3 qk_slots4 qk_slots2 qk_prog qk_base qk_slots3; do
  timeout 60 bin/$v 50 >> $o/times.txt 2>&1
done
OUT=$o timeout 60 bin/qk_slots3_trace 50 >> $o/times.txt 2>&1
pack
M=""
for r in barrier long_scoreboard short_scoreboard mio_throttle lg_throttle math_pipe_throttle wait not_selected selected dispatch_stall no_instruction branch_resolving membar sleeping misc; do M="$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"; done
M=${M#,}
timeout 120 ncu --clock-control none -k regex:bandjit_band -s 5 -c 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section SchedulerStats --metrics "$M,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,lts__t_sectors.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum" bin/qk_slots3 5 > $o/ncu-qk_slots3.txt 2>&1
pack
rm -rf $o
