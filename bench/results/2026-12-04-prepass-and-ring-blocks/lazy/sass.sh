#!/usr/bin/env bash
# Register counts and the order of the x copies (LDGSTS) and mask loads (LDG) in each variant's
# sm_90a SASS, from the objects lazy/build.sh leaves in $W (default /tmp/lazy). Needs cuobjdump
# (here: the one shipped with the triton wheel). Output: sass.txt.
w=${1:-/tmp/lazy}; cuobjdump=${CUOBJDUMP:-cuobjdump}
for v in o l1 l2 l2u ou lb; do
  echo "== $v"
  $cuobjdump -res-usage $w/k16$v.o | grep -A1 "Function bandjit" | tail -1 | grep -o "REG:[0-9]*"
  $cuobjdump -sass $w/k16$v.o | grep -E "LDGSTS|LDG\.E" | head -16 | awk '{print $1, $2, $3, $4, $5}'
done
