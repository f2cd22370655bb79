#!/usr/bin/env bash
# Issue 3's problems with today's code (commit b7955fb: the band kernels as the
# 2026-12-02-qk-pv-anatomy record left them), bandjit beside its peers in one run:
# `scripts/bench OUT bench/shapes/issue-3.json` (bench, bench/peers/peers.py, bench/merge.py).
# One call on the H200; carry build/bandjit.
o=$OUT/issue-3; mkdir -p $o
export BANDJIT_SOURCE_DIR=$PWD BANDJIT_CLI=$PWD/build/bandjit BANDJIT_CACHE_DIR=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/gpu.txt
timeout 420 scripts/bench $o bench/shapes/issue-3.json > $o/run.txt 2>&1; echo "exit $?" >> $o/run.txt
tar czf $OUT/issue-3.tgz -C $OUT issue-3; rm -rf $o
