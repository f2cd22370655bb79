#!/usr/bin/env bash
# On the H200 (carry .scratch/qkx = this folder with bin/ built): the write-only kernels of
# writes.cu. r4-writes.txt is this run of the first writes.cu (10 rows); run5.sh ran the version
# in this folder, which added the tile-major and read rows (15 rows, runs/r5/writes.txt).
mkdir -p $OUT/r4 && .scratch/qkx/bin/writes > $OUT/r4/writes.txt 2>&1; cat $OUT/r4/writes.txt
