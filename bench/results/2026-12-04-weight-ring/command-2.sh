#!/usr/bin/env bash
# Call 2 (carry build/bandjit = 5b725f4): Nsight Compute's full set on the float16 H = 65536
# layer_norm forward under the default and under rings of 2 and 6 pieces (clocks not locked).
d=bench/results/2026-12-04-weight-ring
o=$OUT/c2; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/c2.tgz -C $OUT c2; }
prof() {  # name setting...
  local name=$1; shift
  export BANDJIT_CACHE_DIR=/tmp/c2-$name
  env "$@" build/bandjit pregenerate --shapes $d/ln-f16-65536.json > /dev/null 2>&1
  env "$@" timeout 150 ncu --clock-control none --set full --import-source no -k bandjit_layer_norm --launch-skip 3 --launch-count 1 \
    -o $o/$name build/bandjit bench --runs 5 --shapes $d/ln-f16-65536.json > $o/$name.log 2>&1
  ncu --import $o/$name.ncu-rep --print-details all > $o/$name.txt 2>&1
  ncu --import $o/$name.ncu-rep --page source --csv --print-source sass > $o/$name-sass.csv 2>&1
  rm -f $o/$name.ncu-rep
  pack $name
}
prof ncu-default BANDJIT_UNUSED=0
prof ncu-ring2 BANDJIT_ROW_WEIGHT_RING=2
prof ncu-ring6 BANDJIT_ROW_WEIGHT_RING=6
pack done
rm -rf $o
