#!/usr/bin/env bash
# band_softmax / band_softmax_backward: each block's rows staged as one span in shared memory
# and written as whole 16-byte pieces (BlockSpan), against HEAD's binary (.scratch/bandjit-head)
# in one run; GPU tests and check of both families; Nsight Compute store metrics on the seed.
o=$OUT/bs3; mkdir -p $o
pack() { tar czf $OUT/bs3.tgz -C $OUT bs3; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
A=$(mktemp -d); B=$(mktemp -d)
R=.scratch/record-shapes.json
S="tests/shapes/edge-cases.json shapes/longformer-base-4096.json shapes/longformer-charlm-small.json shapes/longformer-large-4096.json"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
BANDJIT_CACHE_DIR=$A .scratch/bandjit-head pregenerate -j 8 --ops training --shapes $R > $o/pregenerate-head.txt 2>&1 &
BANDJIT_CACHE_DIR=$B build/bandjit pregenerate -j 8 --ops training --shapes $R $S > $o/pregenerate.txt 2>&1
wait
for round in 1 2; do
  BANDJIT_CACHE_DIR=$A timeout 90 .scratch/bandjit-head bench --shapes $R --runs 30 --json $o/bench-head-$round.json > $o/bench-head-$round.txt 2>&1
  BANDJIT_CACHE_DIR=$B timeout 90 build/bandjit bench --shapes $R --runs 30 --json $o/bench-new-$round.json > $o/bench-new-$round.txt 2>&1
done
pack
BANDJIT_CACHE_DIR=$B timeout 150 build/tests/bandjit_gpu_tests "[band_softmax],[band_softmax_backward],[attention_backward]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack
BANDJIT_CACHE_DIR=$B timeout 150 build/bandjit check --ops band_softmax band_softmax_backward attention_backward --shapes $S --json $o/check.json > $o/check.txt 2>&1; echo "exit $?" >> $o/check.txt; pack
M=smsp__inst_executed.sum,smsp__issue_active.avg.per_cycle_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,lts__t_sectors_op_write.sum,launch__registers_per_thread
echo '{"problems": [{"batch":1,"heads":12,"seq_len":4096,"head_dim":64,"window_left":256,"window_right":256,"dtype":"float16"}]}' > /tmp/seed.json
for k in band_softmax band_softmax_backward; do
  BANDJIT_CACHE_DIR=$A timeout 60 ncu --clock-control none -k regex:"bandjit_${k}\$" -s 2 -c 1 --metrics $M .scratch/bandjit-head bench --shapes /tmp/seed.json --runs 3 > $o/ncu-head-$k.txt 2>&1
  BANDJIT_CACHE_DIR=$B timeout 60 ncu --clock-control none -k regex:"bandjit_${k}\$" -s 2 -c 1 --metrics $M build/bandjit bench --shapes /tmp/seed.json --runs 3 > $o/ncu-new-$k.txt 2>&1
done
pack; rm -rf $o
