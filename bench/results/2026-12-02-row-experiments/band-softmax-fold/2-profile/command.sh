#!/usr/bin/env bash
# What bounds band_softmax float16 (62 % of copy on the seed, 74 % at B = 12) when the row
# softmax at L = 768 float16 reaches 92 %: Nsight Compute memory and stall metrics of both.
o=$OUT/bs2; mkdir -p $o
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CACHE_DIR=$(mktemp -d)
M=""
for r in barrier long_scoreboard short_scoreboard mio_throttle lg_throttle math_pipe_throttle wait not_selected selected dispatch_stall no_instruction branch_resolving membar drain; do M="$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"; done
M="${M#,},dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sector_hit_rate.pct,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__warps_eligible.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,smsp__inst_executed.sum,launch__occupancy_limit_registers,launch__occupancy_limit_warps,launch__waves_per_multiprocessor,launch__registers_per_thread,launch__grid_size,launch__block_size,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,l1tex__throughput.avg.pct_of_peak_sustained_active"
echo '{"problems": [{"batch":1,"heads":12,"seq_len":4096,"head_dim":64,"window_left":256,"window_right":256,"dtype":"float16"}]}' > /tmp/seed.json
echo '{"problems": [{"batch":12,"heads":12,"seq_len":4096,"head_dim":64,"window_left":256,"window_right":256,"dtype":"float16"}]}' > /tmp/b12.json
echo '{"problems": [{"parameter_set": "softmax", "rows": 87382, "row_length": 768, "dtype": "float16"}]}' > /tmp/sm768.json
echo '{"problems": [{"parameter_set": "softmax", "rows": 98304, "row_length": 512, "dtype": "float16"}]}' > /tmp/sm512.json
build/bandjit pregenerate -j 16 --shapes /tmp/seed.json /tmp/b12.json /tmp/sm768.json /tmp/sm512.json > $o/pregenerate.txt 2>&1
timeout 60 ncu --clock-control none -k regex:'bandjit_band_softmax$' -s 2 -c 1 --metrics $M build/bandjit bench --shapes /tmp/seed.json --runs 3 > $o/band-seed.txt 2>&1
timeout 60 ncu --clock-control none -k regex:'bandjit_band_softmax$' -s 2 -c 1 --metrics $M build/bandjit bench --shapes /tmp/b12.json --runs 3 > $o/band-b12.txt 2>&1
timeout 60 ncu --clock-control none -k regex:'bandjit_softmax$' -s 2 -c 1 --metrics $M build/bandjit bench --shapes /tmp/sm768.json --runs 3 > $o/softmax-768.txt 2>&1
timeout 60 ncu --clock-control none -k regex:'bandjit_softmax$' -s 2 -c 1 --metrics $M build/bandjit bench --shapes /tmp/sm512.json --runs 3 > $o/softmax-512.txt 2>&1
build/bandjit bench --shapes /tmp/sm512.json --runs 30 > $o/bench-sm512.txt 2>&1
tar czf $OUT/bs2.tgz -C $OUT bs2; rm -rf $o
