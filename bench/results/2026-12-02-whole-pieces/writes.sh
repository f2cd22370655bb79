#!/usr/bin/env bash
# Section 1: built on the build machine, run on the H200 (carry the folder with the binary).
#   nvcc -O3 -arch=sm_90 -std=c++17 -o writes writes.cu
# On the H200:
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader && ./writes | tee writes.txt
