#!/usr/bin/env bash
# Build machine, no GPU: the float32 H = 65536 forward with the ring turned off
# (BANDJIT_ROW_WEIGHT_RING=0, build/bandjit of this record's final code) against
# build/bandjit-head (e9beb41, whose layer_norm forward is bd1c032's): `bandjit emit` (the
# generated part), and the sm_90a SASS of the standalone sources (instruction text).
P='{"parameter_set":"layer_norm","rows":1024,"hidden":65536,"dtype":"float32"}'
t=$(mktemp -d)
BANDJIT_ROW_WEIGHT_RING=0 build/bandjit emit --family layer_norm --problem "$P" | md5sum | sed 's/-$/emit, ring off/'
build/bandjit-head emit --family layer_norm --problem "$P" | md5sum | sed 's/-$/emit, e9beb41/'
BANDJIT_ROW_WEIGHT_RING=0 build/bandjit emit --standalone --family layer_norm --problem "$P" > $t/off.cu
build/bandjit-head emit --standalone --family layer_norm --problem "$P" > $t/head.cu
for f in off head; do
  nvcc -std=c++17 -I/usr/local/cuda/include -cubin -arch=sm_90a $t/$f.cu -o $t/$f.cubin
  ${CUOBJDUMP:-cuobjdump} -sass $t/$f.cubin | grep -E '^\s+/\*[0-9a-f]+\*/' | sed 's/ *\/\* 0x[0-9a-f]* \*\///' | md5sum | sed "s/-\$/SASS, $f/"
done
rm -rf $t
