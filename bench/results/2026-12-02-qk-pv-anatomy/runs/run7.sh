#!/usr/bin/env bash
# On the H200 (cd .scratch/qkx = this folder with bin/ built): per-instruction stall sampling (Nsight Compute source page) of band_qk base and prog.
cd "$(dirname "$0")"
o=$OUT/r7; mkdir -p $o
for v in qk_rs qk_rs_computeonly qk_rs_nowrite qk_base qk_nofence qk_computeonly qk_computeonly_nofence qk_nowrite qk_nowrite_nofence qk_prog qk_prog_nofence pv_base pv_nofence qk_base qk_nofence; do timeout 60 bin/$v 50 >> $o/times.txt 2>&1; done
cat $o/times.txt
tar czf $OUT/r7.tgz -C $OUT r7
for v in qk_base qk_prog; do
  timeout 150 ncu --clock-control none -k regex:bandjit_band -s 5 -c 1 --section WarpStateStats --section SourceCounters --import-source no -o $o/$v bin/$v 5 > $o/ncu-$v.log 2>&1
  timeout 60 ncu -i $o/$v.ncu-rep --page source --csv --print-source sass > $o/src-$v.csv 2> $o/src-$v.err
  timeout 60 ncu -i $o/$v.ncu-rep --page details > $o/details-$v.txt 2>&1
  rm -f $o/$v.ncu-rep
done
tar czf $OUT/r7.tgz -C $OUT r7; rm -rf $o
