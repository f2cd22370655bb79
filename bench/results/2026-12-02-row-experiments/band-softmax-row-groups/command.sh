#!/usr/bin/env bash
# band_softmax with rows taken in turn by each thread group, the next row's pieces loaded
# before this one is reduced (BANDJIT_ROW_PREFETCH=1; BANDJIT_ROW_WAVES = rows a group takes,
# default 2), beside the default (the previous kernel: same SASS) in one run; GPU tests and
# check of band_softmax under both group sizes.
o=$OUT/bs5; mkdir -p $o
pack() { tar czf $OUT/bs5.tgz -C $OUT bs5; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
A=$(mktemp -d); B=$(mktemp -d); C=$(mktemp -d)
R=.scratch/record-shapes.json
S="tests/shapes/edge-cases.json shapes/longformer-base-4096.json shapes/longformer-charlm-small.json"
BANDJIT_CACHE_DIR=$A build/bandjit pregenerate -j 5 --shapes $R > $o/pregenerate-default.txt 2>&1 &
BANDJIT_ROW_PREFETCH=1 BANDJIT_CACHE_DIR=$B build/bandjit pregenerate -j 5 --shapes $R > $o/pregenerate-g2.txt 2>&1 &
BANDJIT_ROW_PREFETCH=1 BANDJIT_ROW_WAVES=4 BANDJIT_CACHE_DIR=$C build/bandjit pregenerate -j 5 --shapes $R > $o/pregenerate-g4.txt 2>&1
wait
BANDJIT_CACHE_DIR=$A timeout 60 build/bandjit bench --shapes $R --runs 30 --json $o/bench-default.json > $o/bench-default.txt 2>&1
BANDJIT_ROW_PREFETCH=1 BANDJIT_CACHE_DIR=$B timeout 60 build/bandjit bench --shapes $R --runs 30 --json $o/bench-g2.json > $o/bench-g2.txt 2>&1
BANDJIT_ROW_PREFETCH=1 BANDJIT_ROW_WAVES=4 BANDJIT_CACHE_DIR=$C timeout 60 build/bandjit bench --shapes $R --runs 30 --json $o/bench-g4.json > $o/bench-g4.txt 2>&1
pack
BANDJIT_ROW_PREFETCH=1 BANDJIT_CACHE_DIR=$B timeout 60 build/tests/bandjit_gpu_tests "[band_softmax]" > $o/gpu-tests-g2.txt 2>&1; echo "exit $?" >> $o/gpu-tests-g2.txt; pack
BANDJIT_ROW_PREFETCH=1 BANDJIT_CACHE_DIR=$B timeout 50 build/bandjit check --ops band_softmax --shapes $S --json $o/check-g2.json > $o/check-g2.txt 2>&1; echo "exit $?" >> $o/check-g2.txt; pack
BANDJIT_ROW_PREFETCH=1 BANDJIT_ROW_WAVES=4 BANDJIT_CACHE_DIR=$C timeout 50 build/bandjit check --ops band_softmax --shapes $S --json $o/check-g4.json > $o/check-g4.txt 2>&1; echo "exit $?" >> $o/check-g4.txt; pack
rm -rf $o
