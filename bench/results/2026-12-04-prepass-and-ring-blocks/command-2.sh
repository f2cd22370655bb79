#!/usr/bin/env bash
# Call 2 (carry .scratch/lazy/harness, built by lazy/build.sh into .scratch/lazy on the build
# machine): the lazy-mask variants checked and timed.
.scratch/lazy/harness > $OUT/harness.txt 2>&1; cat $OUT/harness.txt
