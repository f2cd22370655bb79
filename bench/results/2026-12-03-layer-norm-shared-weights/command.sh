#!/usr/bin/env bash
# One call on the H200 (carry build/bandjit): layer_norm at H = 65536 with the forward's
# weight and bias slices in shared memory (BANDJIT_ROW_SHARED_WEIGHTS), against the weights
# read from the L2 every row (=0), under grid and layout knobs; `check` of the new default;
# Nsight Compute sections of the kernels still below 80 %.
d=bench/results/2026-12-03-layer-norm-shared-weights
o=$OUT/sw; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/sw.tgz -C $OUT sw; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
timeout 260 scripts/sweep-rows $o/sweep $d/ln-65536.json default "BANDJIT_ROW_SHARED_WEIGHTS=0" \
  "BANDJIT_ROW_WAVES=2" "BANDJIT_ROW_WAVES=8" "BANDJIT_ROW_WAVES=16" \
  "BANDJIT_ROW_PREFETCH=1 BANDJIT_ROW_REGISTERS=32 BANDJIT_ROW_BLOCK_THREADS=256" \
  "BANDJIT_ROW_BLOCK_THREADS=512" "BANDJIT_ROW_BLOCK_THREADS=512 BANDJIT_ROW_PREFETCH=1" \
  "BANDJIT_ROW_BLOCK_THREADS=1024" > $o/sweep.txt 2>&1
pack sweep
for s in default "BANDJIT_ROW_PREFETCH=1 BANDJIT_ROW_REGISTERS=32 BANDJIT_ROW_BLOCK_THREADS=256"; do
  n=$(echo "$s" | tr ' =' '_-'); vars=(); [ "$s" = default ] || read -ra vars <<< "$s"
  env "${vars[@]}" timeout 100 build/bandjit check --timing-runs 1 --shapes $d/ln-65536.json --json $o/check-$n.json > $o/check-$n.txt 2>&1
  echo "exit $?" >> $o/check-$n.txt; pack check-$n
done
# The staged backward with each row's mean and rstd from lanes loaded 32 rows ahead
# (build/bandjit) against aac1b7b's (build/bandjit-head: the layer_norm code of 85b67ed):
# 16-bit rows where it is the default, and float32 H = 65536 staged (BANDJIT_ROW_STAGED=1).
C=$(mktemp -d)
for run in 1 2; do
  for b in bandjit-head bandjit; do
    BANDJIT_CACHE_DIR=$C/$b timeout 60 build/$b bench --runs 30 --shapes $d/ln-staged-rows.json --json $o/staged-$b-$run.json > $o/staged-$b-$run.txt 2>&1
    BANDJIT_ROW_STAGED=1 BANDJIT_CACHE_DIR=$C/$b-f32 timeout 60 build/$b bench --runs 30 --shapes $d/ln-f32-65536.json --json $o/staged-f32-$b-$run.json > $o/staged-f32-$b-$run.txt 2>&1
    pack staged-$b-$run
  done
done
timeout 100 build/bandjit check --timing-runs 1 --shapes $d/ln-staged-rows.json --json $o/check-staged.json > $o/check-staged.txt 2>&1
echo "exit $?" >> $o/check-staged.txt
BANDJIT_ROW_STAGED=1 timeout 60 build/bandjit check --timing-runs 1 --shapes $d/ln-f32-65536.json --json $o/check-staged-f32.json > $o/check-staged-f32.txt 2>&1
echo "exit $?" >> $o/check-staged-f32.txt
pack done2
nc() {  # nc NAME KERNEL SHAPES
  timeout 60 ncu --clock-control none -k $2 --launch-skip 3 --launch-count 1 --section SpeedOfLight \
    --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats --section SchedulerStats \
    --section LaunchStats build/bandjit bench --runs 5 --shapes $d/$3 > $o/ncu-$1.txt 2>&1; pack ncu-$1
}
nc fwd-f16-65536 bandjit_layer_norm ln-f16-65536.json
nc bwd-f16-65536 bandjit_layer_norm_backward ln-f16-65536.json
nc bwd-f32-65536 bandjit_layer_norm_backward ln-f32-65536.json
nc bwd-f16-16384 bandjit_layer_norm_backward ln-f16-16384.json
nc bwd-f16-100 bandjit_layer_norm_backward ln-f16-100.json
pack done
