#!/usr/bin/env bash
# Call 3 on the H200 (carry .scratch/bandjit-clusters, .scratch/occ): the final code (commit
# 51af82e: the staged backward by default for 16-bit rows of H >= 5120). bandjit-clusters is
# 51af82e with the generator's clusters a wave read from LN_CLUSTERS; unset, its sources are
# byte-identical to 51af82e's, so it serves as build/bandjit here too.
#  1. `occ` (occupancy.cu, built on the build machine): clusters of 1-16 blocks of the staged
#     backward's size the GPU holds at once;
#  2. `bench` of ln-16bit-long.json, twice in turn: the defaults; clusters of the H = 65536 rows
#     sized for 28 and 30 clusters at once (bandjit-clusters: the final code with the
#     generator's clusters a wave read from LN_CLUSTERS, BANDJIT_ROW_WAVES=1: 37 and 35 rows a
#     cluster); 256-thread blocks (BANDJIT_ROW_BLOCK_THREADS=256: H = 16384 in clusters of 2,
#     65536 of 8);
#  3. scripts/bench-rows OUT layer_norm: issue 7's layer_norm file beside PyTorch's kernels.
o=$OUT/ln-staged-3; mkdir -p $o
pack() { echo "$SECONDS s" >> $o/steps.txt; tar czf $OUT/ln-staged-3.tgz -C $OUT ln-staged-3; }
d=bench/results/2026-12-02-layer-norm-staged
mkdir -p build && cp .scratch/bandjit-clusters build/bandjit
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit BANDJIT_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $o/gpu.txt
timeout 30 .scratch/occ > $o/occupancy.txt 2>&1; pack
for i in 1 2; do
  timeout 60 build/bandjit bench --shapes $d/ln-16bit-long.json --json $o/bench-default-$i.json > $o/bench-default-$i.txt 2>&1; pack
  for c in 28 30; do
    LN_CLUSTERS=$c BANDJIT_ROW_WAVES=1 BANDJIT_CACHE_DIR=$(mktemp -d) timeout 60 .scratch/bandjit-clusters bench --shapes $d/ln-16bit-long.json --json $o/bench-clusters$c-$i.json > $o/bench-clusters$c-$i.txt 2>&1; pack
  done
  BANDJIT_ROW_BLOCK_THREADS=256 timeout 60 build/bandjit bench --shapes $d/ln-16bit-long.json --json $o/bench-threads256-$i.json > $o/bench-threads256-$i.txt 2>&1; pack
done
timeout 240 scripts/bench-rows $o/bench-rows-layer_norm layer_norm > $o/bench-rows-layer_norm.txt 2>&1; echo "exit $?" >> $o/bench-rows-layer_norm.txt
pack; rm -rf $o
