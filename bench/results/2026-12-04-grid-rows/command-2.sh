#!/usr/bin/env bash
# Calls 2–6 (carry .scratch/grid with the harness built from that call's harness.cu by
# build.sh): the harness alone. N is the call (2, 3, 4, 5, 6; call 5 ran twice, 5a and 5b).
N=${N:?call number}
o=$OUT/c$N; mkdir -p $o; timeout 90 .scratch/grid/harness > $o/harness.txt 2>&1; echo "exit $?" >> $o/harness.txt; tar czf $OUT/c$N.tgz -C $OUT c$N; rm -rf $o
