#!/usr/bin/env bash
# Builds the experiment binaries on the build machine (nvcc of CUDA 13, sm_90a), from this
# folder: kernel.cu is `bandjit emit --family band_tpv --problem SEED_F16` at commit c5b9bdf;
# inc/bandjit is templates/ with band_tpv-experiments.patch applied (switches TPVX_*).
set -euo pipefail
cd "$(dirname "$0")"
rm -rf inc && mkdir -p inc/bandjit && git -C ../../.. archive c5b9bdf templates | tar -x --strip-components=1 -C inc/bandjit && patch -s inc/bandjit/band_tpv.cuh band_tpv-experiments.patch
sed -e 's/kStages = 3/kStages = 4/' -e 's/kWgmmaSharedBytes = 39424/kWgmmaSharedBytes = 52224/' kernel.cu > k_ks32s4.cu
sed -e 's/kStages = 3/kStages = 5/' -e 's/kWgmmaSharedBytes = 39424/kWgmmaSharedBytes = 65024/' kernel.cu > k_ks32s5.cu
sed -e 's/kSlabRows = 32/kSlabRows = 16/' -e 's/kStages = 3/kStages = 6/' kernel.cu > k_ks16s6.cu
sed -e 's/kSlabRows = 32/kSlabRows = 16/' -e 's/kStages = 3/kStages = 8/' -e 's/kWgmmaSharedBytes = 39424/kWgmmaSharedBytes = 52224/' kernel.cu > k_ks16s8.cu
b() { nvcc -O3 -std=c++17 -I inc -gencode=arch=compute_90a,code=sm_90a -DKERNEL_SRC="\"$2\"" -DVARIANT="\"$1\"" "${@:3}" -o "bin/$1" harness.cu; }
mkdir -p bin
b base kernel.cu
b nocompute kernel.cu -DTPVX_NO_COMPUTE          # interior slabs: A fragments loaded, no wgmma
b nox kernel.cu -DTPVX_NO_X                      # interior slabs: no X copies
b noy kernel.cu -DTPVX_NO_Y                      # interior slabs: no Y copies
b loadsonly_x kernel.cu -DTPVX_NO_COMPUTE -DTPVX_NO_Y
b noyc kernel.cu -DTPVX_NO_X -DTPVX_NO_Y -DTPVX_NO_COMPUTE
b empty kernel.cu -DTPVX_NO_X -DTPVX_NO_Y -DTPVX_NO_COMPUTE -DTPVX_EDGE_OFF   # no copies at all
b nofence kernel.cu -DTPVX_NOFENCE               # no fence.proxy.async (timing only)
b rotate kernel.cu -DTPVX_ROTATE                 # slab order rotated so neighbouring tiles read the same X rows together
b flat kernel.cu -DTPVX_FLAT                     # X pieces assigned as (row, piece) = threadIdx + 256 k
b lx_nobar kernel.cu -DTPVX_NO_COMPUTE -DTPVX_NO_Y -DTPVX_NOBAR   # no block barrier (timing only)
for p in 1 2 4 6; do b pf$p kernel.cu -DTPVX_PF=$p; b pfb$p kernel.cu -DTPVX_PF=$p -DTPVX_PF_BULK; done  # L2 prefetch p slabs ahead
for k in ks32s4 ks32s5 ks16s6 ks16s8; do b $k k_$k.cu; done
b ks16s6_noc k_ks16s6.cu -DTPVX_NO_COMPUTE
b nofence_s4 k_ks32s4.cu -DTPVX_NOFENCE; b nofence_ks16s6 k_ks16s6.cu -DTPVX_NOFENCE
b rotate_s4 k_ks32s4.cu -DTPVX_ROTATE; b rotate_ks16s6 k_ks16s6.cu -DTPVX_ROTATE
b pfb4_rot kernel.cu -DTPVX_PF=4 -DTPVX_PF_BULK -DTPVX_ROTATE
b lx_s4 k_ks32s4.cu -DTPVX_NO_COMPUTE -DTPVX_NO_Y; b lx_s4_nobar k_ks32s4.cu -DTPVX_NO_COMPUTE -DTPVX_NO_Y -DTPVX_NOBAR
b nocompute_nobar kernel.cu -DTPVX_NO_COMPUTE -DTPVX_NOBAR; b base_nobar kernel.cu -DTPVX_NOBAR
b noa kernel.cu -DTPVX_NOA; b lx_noa kernel.cu -DTPVX_NOA -DTPVX_NO_COMPUTE -DTPVX_NO_Y   # A fragments zero, not loaded
b lx_noedge kernel.cu -DTPVX_NO_COMPUTE -DTPVX_NO_Y -DTPVX_EDGE_OFF
b base_nozw kernel.cu -DTPVX_NO_ZWRITE; b empty_nozw kernel.cu -DTPVX_NO_X -DTPVX_NO_Y -DTPVX_NO_COMPUTE -DTPVX_EDGE_OFF -DTPVX_NO_ZWRITE  # Z not stored
b lx_flat kernel.cu -DTPVX_FLAT -DTPVX_NO_COMPUTE -DTPVX_NO_Y; b flat_rot kernel.cu -DTPVX_FLAT -DTPVX_ROTATE; b flat_s4 k_ks32s4.cu -DTPVX_FLAT
for v in base nox empty nofence rotate; do b trace_$v kernel.cu -DTPVX_TRACE $(case $v in nox) echo -DTPVX_NO_X;; empty) echo -DTPVX_NO_X -DTPVX_NO_Y -DTPVX_NO_COMPUTE -DTPVX_EDGE_OFF;; nofence) echo -DTPVX_NOFENCE;; rotate) echo -DTPVX_ROTATE;; esac); done
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o bin/pattern pattern.cu
