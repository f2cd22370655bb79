#!/usr/bin/env bash
# One call on the H200, three questions. Carry build/bandjit (this tree: band_pv whole rows
# default where two blocks fit, BANDJIT_PV_WHOLE_ROWS=0 for slabs), .scratch/bandjit-head
# (9c95bd5) and .scratch/bandjit-qkwarp (9c95bd5 + qk-warp-writeout.patch). Outputs $OUT/r3.tgz.
# 1. band_pv on bands of 33 … 513 diagonals: whole P rows (=1 forces them) against slabs (=0).
# 2. band_qk's Hopper kernel: each warp writes its rows out after __syncwarp, not __syncthreads.
# 3. layer_norm_backward rows short of 80 %: BANDJIT_ROW_WAVES 1, 2, 8 against the default (4
#    for clusters, 1 without).
R=bench/results/2026-12-02-band-staging/3-narrow-qkwarp-lnwaves; o=$OUT/r3; mkdir -p $o
export BANDJIT_SOURCE_DIR=$PWD
pack() { tar czf $OUT/r3.tgz -C $OUT r3; }
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > $o/gpu.txt 2>&1
P=$(mktemp -d); A=$(mktemp -d); Q=$(mktemp -d); L=$(mktemp -d)
for w in 0 1; do BANDJIT_PV_WHOLE_ROWS=$w build/bandjit pregenerate -j 16 --ops training --cache-dir $P --shapes $R/shapes.json >> $o/pregenerate.txt 2>&1; done
.scratch/bandjit-head pregenerate -j 16 --cache-dir $A --shapes $R/qk-shapes.json >> $o/pregenerate.txt 2>&1
.scratch/bandjit-qkwarp pregenerate -j 16 --cache-dir $Q --shapes $R/qk-shapes.json >> $o/pregenerate.txt 2>&1
build/bandjit pregenerate -j 16 --cache-dir $L --shapes $R/ln-shapes.json >> $o/pregenerate.txt 2>&1
for rep in 1 2; do
  for w in 0 1; do
    BANDJIT_PV_WHOLE_ROWS=$w timeout 90 build/bandjit bench --runs 50 --cache-dir $P --shapes $R/shapes.json --json $o/pv-w$w-$rep.json > $o/pv-w$w-$rep.txt 2>&1
  done
  pack
  timeout 60 .scratch/bandjit-head bench --runs 50 --cache-dir $A --shapes $R/qk-shapes.json > $o/qk-head-$rep.txt 2>&1
  timeout 60 .scratch/bandjit-qkwarp bench --runs 50 --cache-dir $Q --shapes $R/qk-shapes.json > $o/qk-warp-$rep.txt 2>&1
  pack
done
for wv in "" 1 2 8; do
  BANDJIT_ROW_WAVES=$wv timeout 90 build/bandjit bench --runs 30 --cache-dir $L --shapes $R/ln-shapes.json > $o/ln-waves$wv.txt 2>&1
  pack
done
