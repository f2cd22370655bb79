#!/usr/bin/env bash
# Call 4 on the H200 (carry .scratch/bandjit-final, .scratch/bandjit-clusters): the final code
# (bandjit-final: clusters a wave as the GPU holds them, 30 of 4 and 15 of 8, in both backward
# kernels) against 51af82e (bandjit-clusters with LN_CLUSTERS unset), in one run.
#  1. `check` of the backward of ln-long.json (2^26 elements; the changed grids);
#  2. `bench` of ln-long.json: 51af82e and the final code, twice in turn; then the final code
#     with BANDJIT_ROW_WAVES=1 (the register kernel's clusters in one wave) and with
#     BANDJIT_ROW_STAGED=1 (the staged kernel everywhere);
#  3. scripts/bench-rows OUT layer_norm with the final code: issue 7's file beside PyTorch.
o=$OUT/ln-staged-4; mkdir -p $o
pack() { echo "$SECONDS s" >> $o/steps.txt; tar czf $OUT/ln-staged-4.tgz -C $OUT ln-staged-4; }
d=bench/results/2026-12-02-layer-norm-staged
mkdir -p build && cp .scratch/bandjit-final build/bandjit
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit BANDJIT_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $o/gpu.txt
timeout 150 build/bandjit check --shapes $d/ln-long.json --ops layer_norm_backward --json $o/check-long.json > $o/check-long.txt 2>&1; echo "exit $?" >> $o/check-long.txt; pack
for i in 1 2; do
  BANDJIT_CACHE_DIR=$(mktemp -d) timeout 90 .scratch/bandjit-clusters bench --shapes $d/ln-long.json --json $o/bench-51af82e-$i.json > $o/bench-51af82e-$i.txt 2>&1; pack
  timeout 90 build/bandjit bench --shapes $d/ln-long.json --json $o/bench-final-$i.json > $o/bench-final-$i.txt 2>&1; pack
done
BANDJIT_ROW_WAVES=1 timeout 90 build/bandjit bench --shapes $d/ln-long.json --json $o/bench-final-waves1.json > $o/bench-final-waves1.txt 2>&1; pack
BANDJIT_ROW_STAGED=1 timeout 90 build/bandjit bench --shapes $d/ln-long.json --json $o/bench-final-staged.json > $o/bench-final-staged.txt 2>&1; pack
timeout 240 scripts/bench-rows $o/bench-rows-layer_norm layer_norm > $o/bench-rows-layer_norm.txt 2>&1; echo "exit $?" >> $o/bench-rows-layer_norm.txt
pack; rm -rf $o
