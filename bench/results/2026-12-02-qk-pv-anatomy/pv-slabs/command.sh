#!/usr/bin/env bash
# band_pv's Hopper kernel with longer slabs (BANDJIT_PV_WGMMA_TILING = KS,STAGES; KS 128 newly
# allowed): the harness variants (.scratch/qkx = ../ with bin/ built, runs/run9.sh), then `bench`
# of band_pv on four problems per setting, `check --ops band_pv` of the edge cases with 128,3 and
# 128,2, and the band_pv GPU tests with 128,3. Carry build/bandjit, build/tests/bandjit_gpu_tests, .scratch/qkx.
o=$OUT/pv; mkdir -p $o
pack() { tar czf $OUT/pv.tgz -C $OUT pv; }
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit
OUT=$o bash .scratch/qkx/run9.sh > /dev/null 2>&1; tar xzf $o/r9.tgz -C $o && rm $o/r9.tgz; pack
J='"head_dim":64,"dtype":"float16","layout":"bnhd","ops":["band_pv"]'
P="--problem {\"batch\":1,\"heads\":12,\"seq_len\":4096,\"window_left\":256,\"window_right\":256,\"dilation\":1,$J}
--problem {\"batch\":1,\"heads\":12,\"seq_len\":4096,\"window_left\":256,\"window_right\":256,\"dilation\":4,$J}
--problem {\"batch\":12,\"heads\":12,\"seq_len\":4096,\"window_left\":256,\"window_right\":256,\"dilation\":1,$J}
--problem {\"batch\":1,\"heads\":12,\"seq_len\":32768,\"window_left\":512,\"window_right\":512,\"dilation\":1,$J}"
for t in default 128,3 128,2 64,4; do
  ( [ $t != default ] && export BANDJIT_PV_WGMMA_TILING=$t; BANDJIT_CACHE_DIR=$o/cache-$t timeout 60 build/bandjit bench $P --runs 30 --json $o/bench-$t.json > $o/bench-$t.txt 2>&1 )
done
pack
for t in 128,3 128,2; do
  BANDJIT_PV_WGMMA_TILING=$t BANDJIT_CACHE_DIR=$o/cache-$t timeout 60 build/bandjit check --ops band_pv --shapes tests/shapes/edge-cases.json --json $o/check-$t.json > $o/check-$t.txt 2>&1; echo "exit $?" >> $o/check-$t.txt; pack
done
BANDJIT_PV_WGMMA_TILING=128,3 BANDJIT_CACHE_DIR=$o/cache-128,3 timeout 90 build/tests/bandjit_gpu_tests "[band_pv]" > $o/gpu-tests-128,3.txt 2>&1; echo "exit $?" >> $o/gpu-tests-128,3.txt
rm -rf $o/cache-*; pack; rm -rf $o
