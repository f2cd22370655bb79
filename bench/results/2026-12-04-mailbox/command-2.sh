#!/usr/bin/env bash
# Mailbox call 2 (carry build/bandjit with the mailbox, the staged softmax row opening it after
# its copies are issued; .scratch/head/bandjit of 6cf87a2; .scratch/mb): same-run A/B of the
# long rows' forwards, old, new, old, new, new, old.
o=$OUT/m2; mkdir -p $o
pack() { echo "$1 $SECONDS s" >> $o/steps.txt; tar czf $OUT/m2.tgz -C $OUT m2; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
s=".scratch/mb/ln-long.json .scratch/mb/sm-long.json"
for b in old new; do
  bin=build/bandjit; [ $b = old ] && bin=.scratch/head/bandjit
  BANDJIT_CACHE_DIR=/tmp/cache-$b $bin pregenerate -j 16 --shapes $s > $o/pregenerate-$b.txt 2>&1
done
for r in 1-old 1-new 2-old 2-new 3-new 3-old; do
  b=${r#*-}; bin=build/bandjit; [ $b = old ] && bin=.scratch/head/bandjit
  BANDJIT_CACHE_DIR=/tmp/cache-$b timeout 120 $bin bench --shapes $s --json $o/ab-$r.json > $o/ab-$r.txt 2>&1
  pack ab-$r
done
BANDJIT_CACHE_DIR=/tmp/cache-new timeout 200 build/bandjit check --timing-runs 1 --shapes .scratch/mb/sm-long.json tests/shapes/softmax.json > $o/check.txt 2>&1; echo "exit $?" >> $o/check.txt
pack done
rm -rf $o
