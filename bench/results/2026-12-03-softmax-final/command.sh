#!/usr/bin/env bash
# One call on the H200 (carry build/bandjit, build/bandjit-head, build/tests/bandjit_gpu_tests):
#  build/bandjit-head: commit aac1b7b; build/bandjit: the final code — the staged store's factor
#  in the exponent (../2026-12-03-softmax-factor-fold), the statistics pass unrolled (each
#  piece's wait a constant, no indirect branch) in blocks bounded to 40 registers (three an SM).
#  1. `bench` of ../2026-12-03-softmax-rows-in-turn/long.json: head, new, head, new;
#  2. scripts/gpu-record OUT/rec rows with build/bandjit (GPU tests, check, bench beside PyTorch).
o=$OUT/final; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/final.tgz -C $OUT final; }
export BANDJIT_SOURCE_DIR=$PWD
C=$(mktemp -d)
F=bench/results/2026-12-03-softmax-rows-in-turn/long.json
for b in bandjit-head bandjit; do
  BANDJIT_CACHE_DIR=$C/$b timeout 90 build/$b pregenerate -j 16 --shapes $F > $o/pregenerate-$b.txt 2>&1
done
for run in 1 2; do
  for b in bandjit-head bandjit; do
    BANDJIT_CACHE_DIR=$C/$b timeout 90 build/$b bench --runs 30 --shapes $F --json $o/bench-$b-$run.json > $o/bench-$b-$run.txt 2>&1
    echo "exit $?" >> $o/bench-$b-$run.txt; pack bench-$b-$run
  done
done
STEP_LIMIT=200 scripts/gpu-record $o/rec rows > $o/gpu-record.txt 2>&1
rm -f $o/rec.tgz
pack final
