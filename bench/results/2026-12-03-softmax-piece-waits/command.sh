#!/usr/bin/env bash
# One call on the H200 (carry build/bandjit, build/bandjit-old, build/tests/bandjit_gpu_tests):
#  build/bandjit-old: commit ab4d38b; build/bandjit: the staged forward takes each piece as its
#  copy lands (a cp.async group a piece), one pass for the lane's (max, sum) with the scale in
#  the exponent's FMA, and a boolean mask as bits in registers (slots hold x alone).
#  1. GPU tests [softmax]; `check` of tests/shapes/softmax.json under the defaults and with every
#     stageable forward row staged (BANDJIT_ROW_STAGED=1);
#  2. `bench` of ../2026-12-03-softmax-rows-in-turn/long.json: old, new, new staged, new with
#     smaller staged blocks (256 threads; 4 pieces a thread; 4 pieces in 1024 threads), old, new;
#  3. ncu of the new default's L = 65536 float16 and masked kernels.
o=$OUT/waits; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/waits.tgz -C $OUT waits; }
export BANDJIT_SOURCE_DIR=$PWD
C=$(mktemp -d)
F=bench/results/2026-12-03-softmax-rows-in-turn/long.json
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $o/gpu.txt
BANDJIT_CACHE_DIR=$C/t timeout 150 ./build/tests/bandjit_gpu_tests "[softmax]" --reporter compact > $o/gpu-tests.txt 2>&1
echo "exit $?" >> $o/gpu-tests.txt; pack gpu-tests
for s in default "BANDJIT_ROW_STAGED=1"; do
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
run new-1 bandjit default
run new-staged bandjit "BANDJIT_ROW_STAGED=1"
run new-threads256 bandjit "BANDJIT_ROW_BLOCK_THREADS=256"
run new-pieces4 bandjit "BANDJIT_ROW_PIECES=4"
run new-pieces4-threads1024 bandjit "BANDJIT_ROW_PIECES=4 BANDJIT_ROW_BLOCK_THREADS=1024"
run old-2 bandjit-old default
run new-2 bandjit default
python3 - "$F" $o <<'PY'
import json, sys
shapes = json.load(open(sys.argv[1]))["problems"]
json.dump({"problems": [shapes[0]]}, open(sys.argv[2] + "/one.json", "w"))
json.dump({"problems": [shapes[1]]}, open(sys.argv[2] + "/one-masked.json", "w"))
PY
for one in one one-masked; do
  BANDJIT_CACHE_DIR=$C/bandjit timeout 120 ncu --clock-control none -k regex:softmax --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats --section SchedulerStats \
    --section LaunchStats build/bandjit bench --runs 5 --shapes $o/$one.json > $o/ncu-$one.txt 2>&1
  echo "exit $?" >> $o/ncu-$one.txt; pack ncu-$one
done
pack final
