#!/usr/bin/env bash
# On the H200 (cd .scratch/qkx = this folder with bin/ built): band_qk variants (progressive write-out, double-buffered accumulators) against base.
cd "$(dirname "$0")"
o=$OUT/r2; mkdir -p $o
pack() { tar czf $OUT/r2.tgz -C $OUT r2; }
for v in qk_base qk_prog qk_db qk_dbu qk_dbu_prog qk_db_prog qk_nowrite qk_writeonly qk_computeonly qk_base qk_dbu_prog; do
  timeout 60 bin/$v 50 >> $o/times.txt 2>&1
done
for v in qk_prog_trace qk_dbu_prog_trace qk_writeonly_trace; do OUT=$o timeout 60 bin/$v 50 >> $o/times.txt 2>&1; done
pack
rm -rf $o
