#!/usr/bin/env bash
# Issue 7's worst rows: speed-of-light and stall reasons of layer_norm_backward H = 65536 f16, scale_mask_softmax and softmax L = 65536 f16
o=$OUT/rows-stalls; mkdir -p $o
export BANDJIT_CACHE_DIR=$(mktemp -d)
M=""
for r in barrier long_scoreboard short_scoreboard mio_throttle lg_throttle math_pipe_throttle wait not_selected selected dispatch_stall no_instruction branch_resolving membar sleeping drain misc; do M="$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"; done
M="${M#,},smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__cluster_dim_x,launch__occupancy_limit_shared_mem,launch__occupancy_limit_registers"
run() {  # name kernel problem
  timeout 60 ncu --clock-control none -k $2 -s 2 -c 1 --metrics "$M" build/bandjit bench --shapes "$3" --runs 3 > $o/$1.txt 2>&1
}
run ln-bwd-f16 bandjit_layer_norm_backward .scratch/ln.json
run sms-f16 bandjit_scale_mask_softmax .scratch/sms.json
run sm-f16 bandjit_softmax .scratch/sm.json
tar czf $OUT/rows-stalls.tgz -C $OUT rows-stalls
