#!/usr/bin/env bash
# band_tpv with running staging pointers; default tiling beside 64-row tiles and two m-tiles per warp
o=$OUT/tpv6; mkdir -p $o
pack() { tar czf $OUT/tpv6.tgz -C $OUT tpv6; }
export BANDJIT_CACHE_DIR=$(mktemp -d) BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
S="tests/shapes/edge-cases.json shapes/longformer-base-4096.json shapes/longformer-large-4096.json shapes/longformer-charlm-small.json shapes/seed-workload-grid.json"
( time build/bandjit pregenerate -j 16 --ops band_tpv --shapes $S .scratch/tpv-shapes.json ) > $o/pregenerate.txt 2>&1
timeout 60 build/bandjit bench --shapes .scratch/tpv-shapes.json --runs 30 --json $o/bench-tpv.json > $o/bench-tpv.txt 2>&1; pack
BANDJIT_TPV_TILING=64,32,4 timeout 60 build/bandjit bench --shapes .scratch/tpv-shapes.json --runs 30 --json $o/bench-tpv-tm64.json > $o/bench-tpv-tm64.txt 2>&1
BANDJIT_TPV_ROW_TILES=2 timeout 60 build/bandjit bench --shapes .scratch/tpv-shapes.json --runs 30 --json $o/bench-tpv-mw2.json > $o/bench-tpv-mw2.txt 2>&1; pack
P='{"batch":1,"heads":12,"seq_len":4096,"head_dim":64,"window_left":256,"window_right":256,"dilation":1,"dtype":"float16","layout":"bnhd","ops":["band_tpv"]}'
M=""
for r in barrier long_scoreboard short_scoreboard mio_throttle lg_throttle math_pipe_throttle wait not_selected selected dispatch_stall no_instruction branch_resolving; do M="$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"; done
timeout 100 ncu --clock-control none -k bandjit_band_tpv -s 3 -c 1 --metrics "gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.per_cycle_active,smsp__warps_active.avg.per_cycle_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,dram__bytes_read.sum$M" build/bandjit bench --problem "$P" --runs 3 > $o/ncu-tpv.txt 2>&1; pack
timeout 120 build/tests/bandjit_gpu_tests "[band_tpv],[attention_backward]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack
timeout 150 build/bandjit check --ops band_tpv --shapes $S --json $o/check-tpv.json > $o/check-tpv.txt 2>&1; echo "exit $?" >> $o/check-tpv.txt; pack
