#!/usr/bin/env bash
# Call s1 (carry .scratch/stasync/w: the harness built by build.sh from 6cf87a2's emitted kernel).
o=$OUT/s1; mkdir -p $o; timeout 90 .scratch/stasync/w/harness > $o/harness.txt 2>&1; echo "exit $?" >> $o/harness.txt; tar czf $OUT/s1.tgz -C $OUT s1; rm -rf $o
