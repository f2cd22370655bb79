#!/usr/bin/env bash
# (ran with the two shape files under .scratch/, identical to the ones named here)
# sliding_window_attention, one barrier per tile: GPU tests, bench of the main problems, ncu of B=12
o=$OUT/r; mkdir -p $o
export BANDJIT_CACHE_DIR=/tmp/c BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
b=build/bandjit
$b pregenerate -j 16 --shapes bench/results/2026-12-01-issue-6/issue-6-main.json > $o/pregen.txt 2>&1
timeout 200 build/tests/bandjit_gpu_tests "[sliding_window_attention]" --reporter compact > $o/gpu-tests.txt 2>&1; tail -1 $o/gpu-tests.txt
for i in 1 2; do $b bench --shapes bench/results/2026-12-01-issue-6/issue-6-main.json --runs 50 --json $o/bench-$i.json > $o/bench-$i.txt 2>&1; grep sliding $o/bench-$i.txt; done
B12='{"batch":12,"heads":12,"seq_len":4096,"head_dim":64,"window_left":256,"window_right":256,"dilation":1,"dtype":"float16","layout":"bnhd","ops":["sliding_window_attention"]}'
M=""
for r in barrier long_scoreboard short_scoreboard mio_throttle math_pipe_throttle wait not_selected selected dispatch_stall no_instruction branch_resolving; do M="$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"; done
timeout 150 ncu --clock-control none -k regex:sliding -s 3 -c 1 --section SpeedOfLight --section WarpStateStats --section Occupancy --section ComputeWorkloadAnalysis --section InstructionStats --metrics "${M#,},sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active" $b bench --problem "$B12" --runs 3 > $o/ncu-b12.txt 2>&1
grep -E "Duration|Issue Slots|Issued Ipc|Executed Ipc|pipe_xu|stalled|Registers Per|Achieved Occ|Issued Instructions  " $o/ncu-b12.txt | head -30
tar czf $OUT/r.tgz -C $OUT r
