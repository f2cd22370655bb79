#!/usr/bin/env bash
# One call on the H200 (carry build/bandjit, build/bandjit-old, build/tests/bandjit_gpu_tests):
#  build/bandjit-old: commit ab4d38b; build/bandjit: the staged forward's one-pass lane statistics
#  (scale folded into the exponent's FMA) and, in the sm_90a build, staged rows in turn through
#  a ring of stages (softmax_forward_rows_in_turn).
#  1. GPU tests [softmax]; `check` of tests/shapes/softmax.json under the defaults and with every
#     stageable forward row staged and in turn (BANDJIT_ROW_STAGED=1 BANDJIT_ROW_PREFETCH=1);
#  2. `bench` of long.json: old, new under five settings, old again;
#  3. ncu of the new default's L = 65536 float16 kernel and the old one's.
o=$OUT/turn; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/turn.tgz -C $OUT turn; }
export BANDJIT_SOURCE_DIR=$PWD
C=$(mktemp -d)
F=bench/results/2026-12-03-softmax-rows-in-turn/long.json
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $o/gpu.txt
BANDJIT_CACHE_DIR=$C/t timeout 150 ./build/tests/bandjit_gpu_tests "[softmax]" --reporter compact > $o/gpu-tests.txt 2>&1
echo "exit $?" >> $o/gpu-tests.txt; pack gpu-tests
for s in default "BANDJIT_ROW_STAGED=1 BANDJIT_ROW_PREFETCH=1"; do
  n=$(echo "$s" | tr ' =' '_-'); vars=(); [ "$s" = default ] || read -ra vars <<< "$s"
  env "${vars[@]}" BANDJIT_CACHE_DIR=$C/c timeout 100 build/bandjit pregenerate -j 16 --shapes tests/shapes/softmax.json > $o/check-$n.pregen.txt 2>&1
  env "${vars[@]}" BANDJIT_CACHE_DIR=$C/c timeout 100 build/bandjit check --timing-runs 1 --shapes tests/shapes/softmax.json --json $o/check-$n.json > $o/check-$n.txt 2>&1
  echo "exit $?" >> $o/check-$n.txt; tail -2 $o/check-$n.txt; pack check-$n
done
run() {  # run NAME BINARY SETTING
  local vars=(); [ "$3" = default ] || read -ra vars <<< "$3"
  env "${vars[@]}" BANDJIT_CACHE_DIR=$C/$2 timeout 90 build/$2 pregenerate -j 16 --shapes $F > $o/bench-$1.pregen.txt 2>&1
  env "${vars[@]}" BANDJIT_CACHE_DIR=$C/$2 timeout 90 build/$2 bench --runs 30 --shapes $F --json $o/bench-$1.json > $o/bench-$1.txt 2>&1
  echo "exit $?" >> $o/bench-$1.txt; pack bench-$1
}
run old-1 bandjit-old default
run new bandjit default
run new-stages2 bandjit "BANDJIT_ROW_STAGES=2"
run new-waves2 bandjit "BANDJIT_ROW_WAVES=2"
run new-not-in-turn bandjit "BANDJIT_ROW_PREFETCH=0"
run new-staged bandjit "BANDJIT_ROW_STAGED=1"
run old-2 bandjit-old default
echo '{"problems":[{"parameter_set":"softmax","rows":1024,"row_length":65536,"dtype":"float16","ops":["softmax"]}]}' > $o/one.json
for b in bandjit bandjit-old; do
  BANDJIT_CACHE_DIR=$C/$b timeout 120 ncu --clock-control none -k regex:bandjit_softmax --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats --section SchedulerStats \
    --section LaunchStats build/$b bench --runs 5 --shapes $o/one.json > $o/ncu-$b.txt 2>&1
  echo "exit $?" >> $o/ncu-$b.txt; pack ncu-$b
done
pack final
