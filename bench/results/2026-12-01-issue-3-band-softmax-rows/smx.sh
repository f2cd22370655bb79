#!/usr/bin/env bash
# band_softmax(/_backward) with more pieces per thread (fewer idle slots): BANDJIT_EXP_SM_SLOTS of the experiment binary
o=$OUT/smx; mkdir -p $o
pack() { tar czf $OUT/smx.tgz -C $OUT smx; }
export BANDJIT_CACHE_DIR=$(mktemp -d) BANDJIT_SOURCE_DIR=$PWD
S="tests/shapes/edge-cases.json shapes/longformer-base-4096.json shapes/longformer-large-4096.json shapes/longformer-charlm-small.json shapes/seed-workload-grid.json"
for sl in 32 40 72; do
  export BANDJIT_EXP_SM_SLOTS=$sl
  build/bandjit-exp pregenerate -j 16 --ops band_softmax band_softmax_backward --shapes .scratch/sm-shapes.json > $o/pregenerate-$sl.txt 2>&1
  timeout 60 build/bandjit-exp bench --shapes .scratch/sm-shapes.json --runs 30 --json $o/bench-$sl.json > $o/bench-$sl.txt 2>&1; pack
done
for sl in 40 72; do
  export BANDJIT_EXP_SM_SLOTS=$sl
  timeout 100 build/bandjit-exp check --ops band_softmax band_softmax_backward --shapes $S --json $o/check-$sl.json > $o/check-$sl.txt 2>&1; echo "exit $?" >> $o/check-$sl.txt; pack
done
