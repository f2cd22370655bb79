#!/usr/bin/env bash
# band_softmax / band_softmax_backward with merged boundary pieces (BoundaryPieces: a piece two
# rows of a block share is stored once, whole), against HEAD's binary, in one run:
#   head = .scratch/bandjit-head (commit 484a744's kernels), new = build/bandjit (the change;
#   backward launch bounds (256, 3)), c = .scratch/bandjit-c (also the forward at (256, 6)).
# Then the GPU tests and check of the changed families with build/bandjit, and check of c's forward.
o=$OUT/bs4; mkdir -p $o
pack() { tar czf $OUT/bs4.tgz -C $OUT bs4; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
A=$(mktemp -d); B=$(mktemp -d); C=$(mktemp -d)
R=.scratch/record-shapes.json
S="tests/shapes/edge-cases.json shapes/longformer-base-4096.json shapes/longformer-charlm-small.json shapes/longformer-large-4096.json"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
BANDJIT_CACHE_DIR=$A .scratch/bandjit-head pregenerate -j 5 --ops training --shapes $R > $o/pregenerate-head.txt 2>&1 &
BANDJIT_CACHE_DIR=$C .scratch/bandjit-c pregenerate -j 5 --ops band_softmax --shapes $R $S > $o/pregenerate-c.txt 2>&1 &
BANDJIT_CACHE_DIR=$B build/bandjit pregenerate -j 6 --ops training --shapes $R $S > $o/pregenerate.txt 2>&1
wait
for round in 1 2; do
  BANDJIT_CACHE_DIR=$A timeout 90 .scratch/bandjit-head bench --shapes $R --runs 30 --json $o/bench-head-$round.json > $o/bench-head-$round.txt 2>&1
  BANDJIT_CACHE_DIR=$B timeout 90 build/bandjit bench --shapes $R --runs 30 --json $o/bench-new-$round.json > $o/bench-new-$round.txt 2>&1
  BANDJIT_CACHE_DIR=$C timeout 90 .scratch/bandjit-c bench --shapes $R --runs 30 --json $o/bench-c-$round.json > $o/bench-c-$round.txt 2>&1
done
pack
BANDJIT_CACHE_DIR=$B timeout 150 build/tests/bandjit_gpu_tests "[band_softmax],[band_softmax_backward],[attention_backward]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack
BANDJIT_CACHE_DIR=$B timeout 150 build/bandjit check --ops band_softmax band_softmax_backward attention_backward --shapes $S --json $o/check.json > $o/check.txt 2>&1; echo "exit $?" >> $o/check.txt; pack
BANDJIT_CACHE_DIR=$C timeout 60 .scratch/bandjit-c check --ops band_softmax --shapes $S --json $o/check-c.json > $o/check-c.txt 2>&1; echo "exit $?" >> $o/check-c.txt; pack
rm -rf $o
