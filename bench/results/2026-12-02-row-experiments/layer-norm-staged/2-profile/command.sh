#!/usr/bin/env bash
# Why staged layer_norm rows are slower: Nsight Compute metrics, default vs BANDJIT_ROW_STAGED=1.
o=$OUT/prof1; mkdir -p $o
export BANDJIT_CACHE_DIR=$(mktemp -d) BANDJIT_SOURCE_DIR=$PWD
M=""
for r in barrier long_scoreboard short_scoreboard mio_throttle lg_throttle math_pipe_throttle wait not_selected selected dispatch_stall no_instruction branch_resolving membar sleeping drain misc; do M="$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"; done
M="${M#,},smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__cluster_dim_x,launch__occupancy_limit_shared_mem,launch__occupancy_limit_registers,launch__waves_per_multiprocessor,launch__registers_per_thread,sm__cycles_active.avg,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed.sum,launch__occupancy_per_cluster_size,launch__cluster_max_active_per_sm"
for f in 768-float16 65536-float16 16384-float32; do
  for s in 0 1; do
    for k in layer_norm layer_norm_backward; do
      BANDJIT_ROW_STAGED=$s build/bandjit pregenerate --shapes .scratch/p-$f.json > /dev/null 2>&1
      BANDJIT_ROW_STAGED=$s timeout 60 ncu --clock-control none -k regex:"bandjit_${k}\$" -s 2 -c 1 --metrics "$M" build/bandjit bench --shapes .scratch/p-$f.json --runs 3 > $o/$f-$k-staged$s.txt 2>&1
    done
  done
done
tar czf $OUT/prof1.tgz -C $OUT prof1
scripts/sweep-rows $OUT/prof1-waves .scratch/p-65536-float16.json default "BANDJIT_ROW_STAGED=1 BANDJIT_ROW_WAVES=4" "BANDJIT_ROW_STAGED=1 BANDJIT_ROW_WAVES=8" "BANDJIT_ROW_STAGED=1 BANDJIT_ROW_WAVES=16" > /dev/null 2>&1
tar czf $OUT/prof1-waves.tgz -C $OUT prof1-waves
