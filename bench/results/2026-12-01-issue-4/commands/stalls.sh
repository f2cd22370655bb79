#!/usr/bin/env bash
# Warp stall reasons (per issued instruction) of the seed problem's float16 band kernels
o=$OUT/stalls; mkdir -p $o
export BANDJIT_CACHE_DIR=$(mktemp -d)
P='{"batch":1,"heads":12,"seq_len":4096,"head_dim":64,"window_left":256,"window_right":256,"dilation":1,"dtype":"float16","layout":"bnhd","ops":["band_tpv","band_pv","band_qk"]}'
build/bandjit bench --problem "$P" --runs 10 > $o/bench.txt 2>&1
M=""
for r in barrier long_scoreboard short_scoreboard mio_throttle lg_throttle math_pipe_throttle wait not_selected selected dispatch_stall no_instruction branch_resolving membar sleeping tex_throttle drain imc_miss misc; do M="$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"; done
M=${M#,}
for k in bandjit_band_tpv bandjit_band_pv bandjit_band_qk; do
  timeout 100 ncu --clock-control none -k $k -s 3 -c 1 --metrics "$M,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active" build/bandjit bench --problem "$P" --runs 3 > $o/stalls-$k.txt 2>&1
done
tar czf $OUT/stalls.tgz -C $OUT stalls
