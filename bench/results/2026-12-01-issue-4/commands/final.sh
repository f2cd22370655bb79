#!/usr/bin/env bash
# Final record of the committed band_tpv (HEAD): checks, GPU tests, bandjit beside its peers on issue 4's problems
o=$OUT/final; mkdir -p $o
pack() { tar czf $OUT/final.tgz -C $OUT final; }
export BANDJIT_CACHE_DIR=$(mktemp -d) BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $o/gpu.txt 2>&1
( time build/bandjit pregenerate -j 16 --ops training --shapes tests/shapes/edge-cases.json shapes/*.json bench/shapes/issue-4.json ) > $o/pregenerate.txt 2>&1; pack
timeout 200 scripts/bench $o/bench-issue-4 bench/shapes/issue-4.json > $o/bench-issue-4.txt 2>&1; echo "exit $?" >> $o/bench-issue-4.txt; pack
timeout 120 build/tests/bandjit_gpu_tests "[band_tpv],[attention_backward]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack
timeout 150 build/bandjit check --ops band_tpv --shapes tests/shapes/edge-cases.json shapes/*.json --json $o/check-tpv.json > $o/check-tpv.txt 2>&1; echo "exit $?" >> $o/check-tpv.txt; pack
timeout 150 build/bandjit check --ops attention_backward --shapes tests/shapes/edge-cases.json --json $o/check-backward.json > $o/check-backward.txt 2>&1; echo "exit $?" >> $o/check-backward.txt; pack
