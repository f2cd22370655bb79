#!/usr/bin/env bash
# On the H200 (after build.sh here; carry this folder's bin/): each binary prints its
# median (50 launches after 400 warm-up ones, 4 input sets of 63 MB rotated) and its worst
# error against a float64 reference of 7 rows × 3 heads. `base 50 384 39424 stream` also
# times a streaming kernel and cudaMemcpy of the same bytes. trace_* write traces under $OUT.
cd "$(dirname "$0")/bin"
./pattern
./base 50 384 39424 stream
for v in nocompute nox noy loadsonly_x noyc empty nofence rotate flat lx_nobar noa lx_noa lx_noedge base_nozw empty_nozw pf1 pf2 pf4 pf6 pfb1 pfb2 pfb4 pfb6 \
         ks32s4 ks32s5 ks16s6 ks16s8 trace_base trace_nox trace_empty trace_nofence trace_rotate; do ./$v 50; done
