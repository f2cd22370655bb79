#!/usr/bin/env bash
# Parts 1 and 3 of command.sh again: its build/bandjit did not run there ("Permission
# denied": the binary was relinked here while the call's copy was taken). Carry build/bandjit.
R=bench/results/2026-12-02-band-staging/3-narrow-qkwarp-lnwaves; o=$OUT/r4; mkdir -p $o
export BANDJIT_SOURCE_DIR=$PWD
pack() { tar czf $OUT/r4.tgz -C $OUT r4; }
P=$(mktemp -d); L=$(mktemp -d)
for w in 0 1; do BANDJIT_PV_WHOLE_ROWS=$w build/bandjit pregenerate -j 16 --ops training --cache-dir $P --shapes $R/shapes.json >> $o/pregenerate.txt 2>&1; done
build/bandjit pregenerate -j 16 --cache-dir $L --shapes $R/ln-shapes.json >> $o/pregenerate.txt 2>&1
for rep in 1 2; do
  for w in 0 1; do
    BANDJIT_PV_WHOLE_ROWS=$w timeout 90 build/bandjit bench --runs 50 --cache-dir $P --shapes $R/shapes.json --json $o/pv-w$w-$rep.json > $o/pv-w$w-$rep.txt 2>&1
  done
  pack
done
for wv in "" 1 2 8; do
  BANDJIT_ROW_WAVES=$wv timeout 90 build/bandjit bench --runs 30 --cache-dir $L --shapes $R/ln-shapes.json > $o/ln-waves$wv.txt 2>&1
  pack
done
