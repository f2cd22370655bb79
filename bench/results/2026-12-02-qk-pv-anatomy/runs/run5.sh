#!/usr/bin/env bash
# On the H200 (cd .scratch/qkx = this folder with bin/ built): write/read floors of the band rows, and the band kernels with tile-major block order.
cd "$(dirname "$0")"
o=$OUT/r5; mkdir -p $o
bin/writes > $o/writes.txt 2>&1
for v in qk_base qk_base_tm qk_prog_tm qk_writeonly_tm qk_computeonly_tm pv_base pv_base_tm pv_ponly_tm qk_base qk_base_tm pv_base pv_base_tm; do
  timeout 60 bin/$v 50 >> $o/times.txt 2>&1
done
for v in base tm base tm; do timeout 60 bin/tpv_$v 50 384 39424 >> $o/times.txt 2>&1; done
tar czf $OUT/r5.tgz -C $OUT r5; rm -rf $o
