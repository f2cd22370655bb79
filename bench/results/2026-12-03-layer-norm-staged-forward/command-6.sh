#!/usr/bin/env bash
# Call 6 on the H200 (carry build/tests/bandjit_gpu_tests = 2b0b20b, and
# build/tests/bandjit_gpu_tests-mut: the same with the overlapped backward's publish pinned to
# slot parity 0, a defect the emulator cannot see): GPU tests [layer_norm] over
# tests/shapes/layer-norm.json, now with staged rows enough to cycle stages and slots; the
# mutant must fail.
o=$OUT/c6; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c6.tgz -C $OUT c6; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CACHE_DIR=$(mktemp -d)
timeout 150 build/tests/bandjit_gpu_tests "[layer_norm]" > $o/gpu-tests.txt 2>&1; echo "exit $?" >> $o/gpu-tests.txt; pack gpu-tests
export BANDJIT_CACHE_DIR=$(mktemp -d)
timeout 150 build/tests/bandjit_gpu_tests-mut "[layer_norm]" > $o/gpu-tests-mutant.txt 2>&1; echo "exit $?" >> $o/gpu-tests-mutant.txt
pack done
rm -rf $o
