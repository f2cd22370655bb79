#!/usr/bin/env bash
# Second call (carry build/bandjit = abea0ae): the
# boolean-masked 16-bit softmax forward with blocks taking G queries of a head at a time
# (G = 1 … 32) against the default, two rounds in opposite order, `check` under each setting
# in round 1; Nsight Compute's DRAM bytes and L2 hit rate of the float16 L = 65536 forward
# (default, G = 16, G = 1); the float16 H = 65536 layer_norm at 990, 1024 and 1056 rows.
d=bench/results/2026-12-04-head-order
o=$OUT/c2; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c2.tgz -C $OUT c2; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CACHE_DIR=/tmp/c2-cache
s=("default"); for g in 1 2 4 8 16 32; do s+=("BANDJIT_ROW_HEAD_GROUP=$g"); done
CHECK_SHAPES=$d/masked-forward.json scripts/sweep-rows $o/r1 $d/masked-forward.json "${s[@]}" > $o/r1.txt 2>&1; pack r1
r=(); for ((i=${#s[@]}-1; i>=0; i--)); do r+=("${s[$i]}"); done
scripts/sweep-rows $o/r2 $d/masked-forward.json "${r[@]}" > $o/r2.txt 2>&1; pack r2
for g in default 16 1; do
  v=(); [ $g = default ] || v=(BANDJIT_ROW_HEAD_GROUP=$g)
  env "${v[@]}" timeout 90 ncu --clock-control none -k bandjit_scale_mask_softmax --launch-skip 3 --launch-count 1 \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum \
    build/bandjit bench --runs 5 --shapes $d/masked-f16-65536.json > $o/ncu-$g.txt 2>&1; pack ncu-$g
done
scripts/sweep-rows $o/waves $d/waves.json default > $o/waves.txt 2>&1; pack done
rm -rf $o
