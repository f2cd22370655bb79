#!/usr/bin/env bash
# Builds the experiment binaries (nvcc 13, sm_90a) into bin/, from this folder. inc/bandjit is
# templates/ at efe201e with experiments.patch applied (switches QKX_*, PVX_*) and the two
# redesigns copied in. ONLY="v1 v2 …" builds just those variants. (Run here as .scratch/qkx.)
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -d inc ]; then
  mkdir -p inc/bandjit && (cd "$(git rev-parse --show-toplevel)" && git archive efe201e templates) | tar -x --strip-components=1 -C inc/bandjit
  (cd inc/bandjit && patch -p2 -s < ../../experiments.patch) && cp band_qk_slots.cuh band_qk_direct.cuh inc/bandjit/
fi
mkdir -p bin
b() { local v=$1 fam=$2; shift 2; if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $v "* ]]; then return; fi; /usr/local/cuda/bin/nvcc -O3 -std=c++17 -I inc -gencode=arch=compute_90a,code=sm_90a -DFAMILY_$fam -DKERNEL_SRC="\"kernel_${KSRC:-${fam,,}}.cu\"" -DVARIANT="\"$v\"" "$@" -o "bin/$v" harness.cu; }
b qk_base QK
b qk_trace QK -DQKX_TRACE
b qk_nowrite QK -DQKX_NO_WRITE
b qk_nostore QK -DQKX_NO_STORE
b qk_nomma QK -DQKX_NO_MMA
b qk_nok QK -DQKX_NO_K
b qk_writeonly QK -DQKX_NO_K -DQKX_NO_MMA -DQKX_NO_STORE
b qk_writeonly_trace QK -DQKX_NO_K -DQKX_NO_MMA -DQKX_NO_STORE -DQKX_TRACE
b qk_nowrite_trace QK -DQKX_NO_WRITE -DQKX_TRACE
b qk_threads QK -DQKX_WRITE_THREADS
b qk_computeonly QK -DQKX_NO_WRITE -DQKX_NO_STORE
b pv_base PV
b pv_trace PV -DPVX_TRACE
b pv_nomma PV -DPVX_NO_MMA
b pv_nop PV -DPVX_NO_P
b pv_nov PV -DPVX_NO_V
b pv_noout PV -DPVX_NO_OUT
b pv_ponly PV -DPVX_NO_V -DPVX_NO_MMA -DPVX_NO_OUT
b pv_ponly_trace PV -DPVX_NO_V -DPVX_NO_MMA -DPVX_NO_OUT -DPVX_TRACE
b qk_prog QK -DQKX_PROG
b qk_prog_trace QK -DQKX_PROG -DQKX_TRACE
b qk_db QK -DQKX_DB
b qk_db_prog QK -DQKX_DB -DQKX_PROG
b qk_db_prog_trace QK -DQKX_DB -DQKX_PROG -DQKX_TRACE
b qk_dbu QK -DQKX_DB -DQKX_DB_UNROLL
b qk_dbu_prog QK -DQKX_DB -DQKX_DB_UNROLL -DQKX_PROG
b qk_dbu_prog_trace QK -DQKX_DB -DQKX_DB_UNROLL -DQKX_PROG -DQKX_TRACE
KSRC=qks b qk_slots3 QK -DQKX_SLOTS -DQKX_STAGES=3 -DQKX_MINB=3
KSRC=qks b qk_slots4 QK -DQKX_SLOTS -DQKX_STAGES=4 -DQKX_MINB=2
KSRC=qks b qk_slots3_trace QK -DQKX_SLOTS -DQKX_STAGES=3 -DQKX_MINB=3 -DQKX_TRACE
KSRC=qks b qk_slots2 QK -DQKX_SLOTS -DQKX_STAGES=2 -DQKX_MINB=3
/usr/local/cuda/bin/nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o bin/writes writes.cu
b qk_base_tm QK -DQKX_TILE_MAJOR
b qk_prog_tm QK -DQKX_TILE_MAJOR -DQKX_PROG
b qk_writeonly_tm QK -DQKX_TILE_MAJOR -DQKX_NO_K -DQKX_NO_MMA -DQKX_NO_STORE
b qk_computeonly_tm QK -DQKX_TILE_MAJOR -DQKX_NO_WRITE -DQKX_NO_STORE
b pv_base_tm PV -DQKX_TILE_MAJOR
b pv_ponly_tm PV -DQKX_TILE_MAJOR -DPVX_NO_V -DPVX_NO_MMA -DPVX_NO_OUT
for v in base tm; do f=""; [ $v = tm ] && f=-DQKX_TILE_MAJOR; /usr/local/cuda/bin/nvcc -O3 -std=c++17 -I inc -gencode=arch=compute_90a,code=sm_90a -DKERNEL_SRC="\"kernel_tpv.cu\"" -DVARIANT="\"tpv_$v\"" $f -o bin/tpv_$v harness_tpv.cu; done  # harness_tpv.cu = tpv-floor harness, trace off
KSRC=qkd b qkd_p3 QK -DQKX_DIRECT -DQKD_PAIR=true -DQKD_MINB=3
KSRC=qkd b qkd_p2 QK -DQKX_DIRECT -DQKD_PAIR=true -DQKD_MINB=2
KSRC=qkd b qkd_p3_tm QK -DQKX_DIRECT -DQKD_PAIR=true -DQKD_MINB=3 -DQKX_TILE_MAJOR
b qk_nofence QK -DQKX_NOFENCE
b qk_computeonly_nofence QK -DQKX_NOFENCE -DQKX_NO_WRITE -DQKX_NO_STORE
b qk_prog_nofence QK -DQKX_NOFENCE -DQKX_PROG
b qk_nowrite_nofence QK -DQKX_NOFENCE -DQKX_NO_WRITE
b pv_nofence PV -DQKX_NOFENCE
b qk_rs QK -DQKX_RS
b qk_rs_computeonly QK -DQKX_RS -DQKX_NO_WRITE -DQKX_NO_STORE
b qk_rs_nowrite QK -DQKX_RS -DQKX_NO_WRITE
b qk_hybrid32 QK -DQKX_HYBRID=32 -DQKX_TILE_MAJOR
b qk_hybrid16 QK -DQKX_HYBRID=16 -DQKX_TILE_MAJOR
b qk_hybrid48 QK -DQKX_HYBRID=48 -DQKX_TILE_MAJOR
b qk_hybrid0 QK -DQKX_HYBRID=0 -DQKX_TILE_MAJOR
b qk_tm QK -DQKX_TILE_MAJOR
# band_pv with longer slabs (runs/run9.sh): kernel_pv.cu with KS keys per slab and STAGES in flight.
for ks in 64 128; do for st in 2 3 4; do sm=$((1024 + st * (ks*128 + 64*(ks+8)*2)))
  sed -e "s/kWgmmaSlabKeys = 32/kWgmmaSlabKeys = $ks/" -e "s/kWgmmaStages = 4/kWgmmaStages = $st/" -e "s/kWgmmaSharedBytes = 37888/kWgmmaSharedBytes = $sm/" kernel_pv.cu > kernel_pv_${ks}_${st}.cu
  KSRC=pv_${ks}_${st} b pv_${ks}_${st} PV
  KSRC=pv_${ks}_${st} b pv_${ks}_${st}_ponly PV -DPVX_NO_V -DPVX_NO_MMA -DPVX_NO_OUT
done; done
