#!/usr/bin/env bash
# Call 6 on the H200: the cluster barriers' final form. Carries build/bandjit-pairs (b1ad33d)
# and build/bandjit + build/tests/bandjit_gpu_tests (this commit: layer_norm's reductions
# arrive after a release fence restricted to the block's shared memory, each warp stores its
# sum of the peers' slots, the last barrier's arrive relaxed; softmax's cluster reductions'
# first arrive likewise). `bench` of the H = 65536 layer_norm rows and of issue 7's softmax
# rows of L = 65536, both binaries alternating, two rounds; `check` of both files; GPU tests
# [layer_norm]; `scripts/bench-rows OUT layer_norm` beside PyTorch.
d=bench/results/2026-12-03-layer-norm-row-pairs
o=$OUT/c6; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c6.tgz -C $OUT c6; }
export BANDJIT_SOURCE_DIR=$PWD
C=$(mktemp -d)
for run in 1 2; do
  for b in bandjit-pairs bandjit; do
    BANDJIT_CACHE_DIR=$C/$b timeout 40 build/$b bench --runs 30 --shapes $d/ln-65536.json --json $o/ln-$b-$run.json > $o/ln-$b-$run.txt 2>&1
    BANDJIT_CACHE_DIR=$C/$b timeout 40 build/$b bench --runs 30 --shapes $d/softmax-65536.json --json $o/sm-$b-$run.json > $o/sm-$b-$run.txt 2>&1
  done
  pack bench-$run
done
export BANDJIT_CACHE_DIR=$C/bandjit
timeout 40 build/bandjit check --timing-runs 1 --shapes $d/ln-65536.json $d/softmax-65536.json --json $o/check.json > $o/check.txt 2>&1
echo "exit $?" >> $o/check.txt; pack check
timeout 60 build/tests/bandjit_gpu_tests "[layer_norm]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack gpu-tests
timeout 60 scripts/bench-rows $o/bench-rows layer_norm > $o/bench-rows.txt 2>&1; echo "exit $?" >> $o/bench-rows.txt
pack done
rm -rf $o
