#!/usr/bin/env bash
# The GPU benchmarks of issue 10 (bench/gpu/README.md): builds the Prism kernels with
# `prism build --emit-host`, compiles each harness with nvcc for the GPU it finds (sm_90a on
# an H100/H200) with the flags `prism build` uses, runs them, and prints Markdown tables of
# Prism against cuBLAS and CUB, headed by the device, driver, nvcc and date (paste them into
# BENCHMARKS.md). Exits non-zero if a harness fails or an output differs from the baseline's.
#
# usage: bench/gpu/run.sh [PRISM_BINARY] [REPS]          (on the GPU machine)
#        bench/gpu/run.sh --compile-only [PRISM_BINARY]   (no GPU: compile the harnesses)
set -euo pipefail
cd "$(dirname "$0")/../.."
compile_only=0
if [ "${1:-}" = "--compile-only" ]; then compile_only=1; shift; fi
prism="${1:-target/release/prism}"
reps="${2:-20}"
nvcc="${PRISM_NVCC:-$(command -v nvcc || scripts/nvcc-path)}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

"$prism" build tests/ui/accept/kernels/32_sgemm_6_vectorized.prism --emit-host -o "$out/sgemm.cu" >/dev/null
"$prism" build tests/ui/accept/kernels/35_scan_lookback_packed.prism --emit-host -o "$out/scan.cu" >/dev/null
"$prism" build tests/ui/accept/kernels/33_reduce_sum_vectorized.prism --emit-host -o "$out/reduce.cu" >/dev/null
"$prism" build tests/ui/accept/kernels/34_gemm_bf16_ldmatrix.prism --emit-host -o "$out/hgemm.cu" >/dev/null
"$prism" build tests/ui/accept/kernels/38_hgemm_warp_specialised.prism --emit-host -o "$out/hgemm_ws.cu" >/dev/null

if [ "$compile_only" = 1 ]; then
    arch=sm_90a
else
    cap="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)"
    arch="sm_$cap"
    [ "$cap" = 90 ] && arch=sm_90a
fi
# The -gencode form: nvcc 13.0's -arch=sm_90a shorthand also runs a plain sm_90 pass that
# rejects Hopper-only instructions (crates/prism_gpu/src/toolchain.rs, `flags`).
flags=(-O3 "-gencode=arch=compute_${arch#sm_},code=$arch" --fmad=false -std=c++17 -lineinfo -Ibench/gpu)
if [ "$compile_only" = 1 ]; then
    "$nvcc" "${flags[@]}" -c -DPRISM_KERNELS="\"$out/sgemm.cu\"" bench/gpu/gemm.cu -o "$out/gemm.o"
    "$nvcc" "${flags[@]}" -c -DPRISM_KERNELS="\"$out/scan.cu\"" bench/gpu/scan.cu -o "$out/scan.o"
    "$nvcc" "${flags[@]}" -c -DPRISM_KERNELS="\"$out/reduce.cu\"" bench/gpu/reduce.cu -o "$out/reduce.o"
    "$nvcc" "${flags[@]}" -c -DPRISM_KERNELS="\"$out/hgemm.cu\"" bench/gpu/hgemm.cu -o "$out/hgemm.o"
    "$nvcc" "${flags[@]}" -c -DPRISM_KERNELS="\"$out/hgemm_ws.cu\"" bench/gpu/hgemm_ws.cu -o "$out/hgemm_ws.o"
    echo "bench/gpu: every harness compiles for $arch"
    exit 0
fi
"$nvcc" "${flags[@]}" -DPRISM_KERNELS="\"$out/sgemm.cu\"" bench/gpu/gemm.cu -lcublas -o "$out/gemm"
"$nvcc" "${flags[@]}" -DPRISM_KERNELS="\"$out/scan.cu\"" bench/gpu/scan.cu -o "$out/scan"
"$nvcc" "${flags[@]}" -DPRISM_KERNELS="\"$out/reduce.cu\"" bench/gpu/reduce.cu -o "$out/reduce"
"$nvcc" "${flags[@]}" -DPRISM_KERNELS="\"$out/hgemm.cu\"" bench/gpu/hgemm.cu -lcublas -o "$out/hgemm"
"$nvcc" "${flags[@]}" -DPRISM_KERNELS="\"$out/hgemm_ws.cu\"" bench/gpu/hgemm_ws.cu -lcublas -o "$out/hgemm_ws"

echo "Device: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1), $("$nvcc" --version | grep -o 'release [0-9.]*'), $(date -u +%Y-%m-%d), median of $reps runs after 3 warm-ups"
echo
status=0
"$out/gemm" "$reps" || status=1
echo
"$out/hgemm" "$reps" || status=1
echo
"$out/hgemm_ws" "$reps" || status=1
echo
"$out/scan" "$reps" || status=1
echo
"$out/reduce" "$reps" || status=1
exit $status
