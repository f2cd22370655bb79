#!/usr/bin/env bash
# Nsight Compute of HEAD's kernels (06a6da1): (1) band_qk on the seed problem, float16: DRAM
# bytes read and written (does S's partial-piece writing read DRAM?), shared-store wavefronts
# and bank conflicts of the staging stores; (2) layer_norm_backward, H = 100 float16, one row a
# unit against two-row units (BANDJIT_ROW_BUNDLE=1): why units slow it. Carry build/bandjit.
o=$OUT/r6; mkdir -p $o
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CACHE_DIR=$(mktemp -d)
SEED='{"batch":1,"heads":12,"seq_len":4096,"head_dim":64,"window_left":256,"window_right":256,"dtype":"float16","layout":"bnhd","ops":["band_qk"]}'
LN='{"parameter_set":"layer_norm","rows":671088,"hidden":100,"dtype":"float16","ops":["layer_norm_backward"]}'
M="dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,smsp__inst_executed.sum,smsp__inst_executed_op_shared_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__inst_executed_op_global_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,gpu__time_duration.sum"
timeout 90 ncu --clock-control none -k bandjit_band_qk -s 3 -c 1 --section SpeedOfLight --section WarpStateStats --metrics "$M" build/bandjit bench --problem "$SEED" --runs 3 > $o/ncu-qk.txt 2>&1
for u in 0 1; do
  BANDJIT_ROW_BUNDLE=$u timeout 90 ncu --clock-control none -k regex:layer_norm -s 3 -c 1 --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats --metrics "$M" build/bandjit bench --problem "$LN" --runs 3 > $o/ncu-ln-bundle$u.txt 2>&1
done
tar czf $OUT/r6.tgz -C $OUT r6; rm -rf $o
