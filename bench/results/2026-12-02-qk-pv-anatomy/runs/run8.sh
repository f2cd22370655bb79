#!/usr/bin/env bash
# On the H200 (cd .scratch/qkx = this folder with bin/ built): band_qk's write-out split between bulk copies (rows < HB) and 16-byte stores by the threads.
cd "$(dirname "$0")"
o=$OUT/r8; mkdir -p $o
for v in qk_tm qk_hybrid0 qk_hybrid16 qk_hybrid32 qk_hybrid48 qk_tm qk_hybrid32 qk_hybrid16; do timeout 60 bin/$v 50 >> $o/times.txt 2>&1; done
cat $o/times.txt
tar czf $OUT/r8.tgz -C $OUT r8; rm -rf $o
