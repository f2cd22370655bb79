#!/usr/bin/env bash
# One call on the H200 (carry build/bandjit): the forward's row pairs (BANDJIT_ROW_PAIRS:
# each thread takes two rows at once and reads each weight and bias once for both) at
# H = 65536 and the long rows, against the defaults; H = 65536 without weight and bias (how
# fast the rows go with no weights to read); `check` under the pairs settings; Nsight Compute
# of the float16 H = 65536 forward with and without pairs.
d=bench/results/2026-12-03-layer-norm-row-pairs
o=$OUT/rp; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/rp.tgz -C $OUT rp; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
P="BANDJIT_ROW_PAIRS=1"
timeout 200 scripts/sweep-rows $o/sweep-65536 $d/ln-65536.json default "$P" \
  "$P BANDJIT_ROW_REGISTERS=16 BANDJIT_ROW_BLOCK_THREADS=512" "$P BANDJIT_ROW_REGISTERS=32 BANDJIT_ROW_BLOCK_THREADS=512" \
  "$P BANDJIT_ROW_REGISTERS=16 BANDJIT_ROW_BLOCK_THREADS=1024" "$P BANDJIT_ROW_REGISTERS=32 BANDJIT_ROW_BLOCK_THREADS=1024" \
  "BANDJIT_ROW_REGISTERS=16 BANDJIT_ROW_BLOCK_THREADS=512" > $o/sweep-65536.txt 2>&1
pack sweep-65536
timeout 60 scripts/sweep-rows $o/sweep-plain $d/ln-65536-plain.json default "$P" > $o/sweep-plain.txt 2>&1
pack sweep-plain
timeout 120 scripts/sweep-rows $o/sweep-long $d/ln-long.json default "$P" \
  "$P BANDJIT_ROW_REGISTERS=32 BANDJIT_ROW_BLOCK_THREADS=512" > $o/sweep-long.txt 2>&1
pack sweep-long
for s in "$P" "$P BANDJIT_ROW_REGISTERS=32 BANDJIT_ROW_BLOCK_THREADS=512" "$P BANDJIT_ROW_REGISTERS=16 BANDJIT_ROW_BLOCK_THREADS=1024"; do
  n=$(echo "$s" | tr ' =' '_-'); read -ra vars <<< "$s"
  env "${vars[@]}" timeout 120 build/bandjit check --timing-runs 1 --shapes $d/ln-65536.json $d/ln-long.json --json $o/check-$n.json > $o/check-$n.txt 2>&1
  echo "exit $?" >> $o/check-$n.txt; pack check-$n
done
nc() {  # nc NAME SETTING
  read -ra vars <<< "$2"
  env "${vars[@]}" timeout 60 ncu --clock-control none -k bandjit_layer_norm --launch-skip 3 --launch-count 1 --section SpeedOfLight \
    --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
    build/bandjit bench --runs 5 --shapes $d/ln-f16-65536.json > $o/ncu-$1.txt 2>&1; pack ncu-$1
}
nc fwd-default "BANDJIT_ROW_X=0"
nc fwd-pairs "$P BANDJIT_ROW_REGISTERS=32 BANDJIT_ROW_BLOCK_THREADS=512"
pack done
