#!/usr/bin/env bash
# On the H200 (cd .scratch/qkx = this folder with bin/ built): band_pv's Hopper kernel with longer slabs (KS keys, STAGES in flight).
cd "$(dirname "$0")"
o=$OUT/r9; mkdir -p $o
for v in pv_base pv_64_2 pv_64_3 pv_64_4 pv_128_2 pv_128_3 pv_128_4 pv_ponly pv_64_4_ponly pv_128_2_ponly pv_128_3_ponly pv_128_4_ponly pv_base pv_128_3 pv_128_2; do timeout 60 bin/$v 50 >> $o/times.txt 2>&1; done
cat $o/times.txt
tar czf $OUT/r9.tgz -C $OUT r9; rm -rf $o
