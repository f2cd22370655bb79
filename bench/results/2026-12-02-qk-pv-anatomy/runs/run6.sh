#!/usr/bin/env bash
# On the H200 (cd .scratch/qkx = this folder with bin/ built): band_qk with direct 32-bit stores from the accumulators (no staging), against base.
cd "$(dirname "$0")"
o=$OUT/r6; mkdir -p $o
for v in qk_base qkd_p3 qkd_p2 qkd_p3_tm qk_base qkd_p3; do timeout 60 bin/$v 50 >> $o/times.txt 2>&1; done
cat $o/times.txt
M=""
for r in barrier long_scoreboard short_scoreboard mio_throttle lg_throttle math_pipe_throttle wait not_selected selected dispatch_stall no_instruction branch_resolving membar sleeping misc; do M="$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"; done
M=${M#,}
timeout 120 ncu --clock-control none -k regex:bandjit_band -s 5 -c 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section SchedulerStats --section LaunchStats --metrics "$M,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,lts__t_sectors.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum" bin/qkd_p3 5 > $o/ncu-qkd_p3.txt 2>&1
tar czf $OUT/r6.tgz -C $OUT r6; rm -rf $o
