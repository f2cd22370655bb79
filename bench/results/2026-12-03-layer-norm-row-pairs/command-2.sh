#!/usr/bin/env bash
# Call 2 on the H200 (carry build/bandjit, commit 251c01a): row pairs on every
# 16-bit layer_norm row of issue 7 below H = 65536, two rounds of each setting, and `check`
# of that file under the two pairs layouts; H = 65536 forward with prefetch in clusters
# (rows in turn; commit 12a204f + the generator allowing it), and its `check`.
d=bench/results/2026-12-03-layer-norm-row-pairs
o=$OUT/c2; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c2.tgz -C $OUT c2; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
P="BANDJIT_ROW_PAIRS=1"
for round in 1 2; do
  timeout 200 scripts/sweep-rows $o/sweep-$round $d/ln-16bit.json default "$P" \
    "$P BANDJIT_ROW_REGISTERS=32 BANDJIT_ROW_BLOCK_THREADS=512" "$P BANDJIT_ROW_BLOCK_THREADS=512" \
    "$P BANDJIT_ROW_BLOCK_THREADS=1024" > $o/sweep-$round.txt 2>&1
  pack sweep-$round
done
for s in "$P" "$P BANDJIT_ROW_REGISTERS=32 BANDJIT_ROW_BLOCK_THREADS=512"; do
  n=$(echo "$s" | tr ' =' '_-'); read -ra vars <<< "$s"
  env "${vars[@]}" timeout 150 build/bandjit check --timing-runs 1 --shapes $d/ln-16bit.json --json $o/check-$n.json > $o/check-$n.txt 2>&1
  echo "exit $?" >> $o/check-$n.txt; pack check-$n
done
F="BANDJIT_ROW_PREFETCH=1"
timeout 150 scripts/sweep-rows $o/sweep-prefetch $d/ln-65536.json default \
  "$F BANDJIT_ROW_REGISTERS=16 BANDJIT_ROW_BLOCK_THREADS=256" "$F BANDJIT_ROW_REGISTERS=32 BANDJIT_ROW_BLOCK_THREADS=256" \
  "$F BANDJIT_ROW_REGISTERS=16 BANDJIT_ROW_BLOCK_THREADS=512" "$F BANDJIT_ROW_REGISTERS=32 BANDJIT_ROW_BLOCK_THREADS=512" \
  "$F BANDJIT_ROW_REGISTERS=16 BANDJIT_ROW_BLOCK_THREADS=256 BANDJIT_ROW_WAVES=1" \
  "$F BANDJIT_ROW_REGISTERS=16 BANDJIT_ROW_BLOCK_THREADS=256 BANDJIT_ROW_WAVES=4" > $o/sweep-prefetch.txt 2>&1
pack sweep-prefetch
s="$F BANDJIT_ROW_REGISTERS=16 BANDJIT_ROW_BLOCK_THREADS=256"; read -ra vars <<< "$s"
env "${vars[@]}" timeout 100 build/bandjit check --timing-runs 1 --shapes $d/ln-65536.json --json $o/check-prefetch.json > $o/check-prefetch.txt 2>&1
echo "exit $?" >> $o/check-prefetch.txt
pack done
