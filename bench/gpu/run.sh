#!/usr/bin/env bash
# The GPU benchmarks of issue 10 (bench/gpu/README.md): builds the Prism kernels with
# `prism build --emit-host`, compiles each harness with nvcc for the GPU it finds (sm_90a on
# an H100/H200) with the flags `prism build` uses, runs them, and prints Markdown tables of
# Prism against cuBLAS and CUB, headed by the device, driver, nvcc and date (paste them into
# BENCHMARKS.md). Exits non-zero if a harness fails or an output differs from the baseline's.
#
# usage: bench/gpu/run.sh [PRISM_BINARY] [REPS]          (on the GPU machine)
#        bench/gpu/run.sh --compile-only [PRISM_BINARY]   (no GPU: compile the harnesses)
#        BUILD_DIR=dir bench/gpu/run.sh --build-only [PRISM_BINARY]
#                                      (build the harness programs into dir, run nothing:
#                                       bench/gpu/profile.sh profiles one of them)
set -euo pipefail
cd "$(dirname "$0")/../.."
compile_only=0
build_only=0
if [ "${1:-}" = "--compile-only" ]; then compile_only=1; shift; fi
if [ "${1:-}" = "--build-only" ]; then build_only=1; shift; fi
prism="${1:-target/release/prism}"
reps="${2:-20}"
nvcc="${PRISM_NVCC:-$(command -v nvcc || scripts/nvcc-path)}"
if [ -n "${BUILD_DIR:-}" ]; then
    out="$BUILD_DIR"
    mkdir -p "$out"
else
    out="$(mktemp -d)"
    trap 'rm -rf "$out"' EXIT
fi

k=tests/ui/accept/kernels
build() { "$prism" build "$k/$1.prism" --emit-host -o "$out/$2.cu" >/dev/null; }
build 32_sgemm_6_vectorized sgemm
build 36_sgemm_pipelined sgemm_pipelined
build 44_sgemm_warp_tiled sgemm_warp
build 46_sgemm_deep_k sgemm_deep_k
build 50_sgemm_wide_tiles sgemm_wide
build 51_sgemm_prefetch sgemm_prefetch
build 35_scan_lookback_packed scan
build 47_scan_warp_transposed scan_warp
build 33_reduce_sum_vectorized reduce
build 42_device_sum_and_max dsum
build 34_gemm_bf16_ldmatrix hgemm
build 37_gemm_bf16_pipelined hgemm_pipelined
build 38_hgemm_warp_specialised hgemm_ws
build 43_gemm_tf32_wgmma tf32gemm
build 45_gemm_tf32_pipelined tf32gemm_pipelined
build 48_gemm_tf32_warp_specialised tf32gemm_ws
build 17_transpose_smem_padded transpose
build 20_softmax_rows_warp softmax
build 49_softmax_rows_block softmax_block

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
# Each harness: its name, its source, and the defines that pick its Prism kernels
# (`S:NAME=value` defines a string, `NAME=value` a token; values hold no spaces).
harnesses=(
    "gemm|gemm.cu|S:PRISM_KERNELS=$out/sgemm.cu"
    "gemm_pipelined|gemm.cu|S:PRISM_KERNELS=$out/sgemm_pipelined.cu PRISM_SGEMM=prism_launch_sgemm_pipelined S:PRISM_SGEMM_LABEL=36_sgemm_pipelined"
    "gemm_warp|gemm.cu|S:PRISM_KERNELS=$out/sgemm_warp.cu PRISM_SGEMM=prism_launch_sgemm_warp_tiled S:PRISM_SGEMM_LABEL=44_sgemm_warp_tiled"
    "gemm_deep_k|gemm.cu|S:PRISM_KERNELS=$out/sgemm_deep_k.cu PRISM_SGEMM=prism_launch_sgemm_deep_k S:PRISM_SGEMM_LABEL=46_sgemm_deep_k"
    "gemm_wide|gemm.cu|S:PRISM_KERNELS=$out/sgemm_wide.cu PRISM_SGEMM=prism_launch_sgemm_wide S:PRISM_SGEMM_LABEL=50_sgemm_wide_tiles PRISM_SGEMM_THREADS=128"
    "gemm_prefetch|gemm.cu|S:PRISM_KERNELS=$out/sgemm_prefetch.cu PRISM_SGEMM=prism_launch_sgemm_prefetch S:PRISM_SGEMM_LABEL=51_sgemm_prefetch PRISM_SGEMM_THREADS=128"
    "gemm_prefetch_hand|gemm.cu|S:PRISM_KERNELS=hand_sgemm_prefetch.cuh PRISM_SGEMM=hand_launch_sgemm_prefetch S:PRISM_SGEMM_LABEL=51_sgemm_prefetch_hand_written_CUDA PRISM_SGEMM_THREADS=128"
    "hgemm|hgemm.cu|S:PRISM_KERNELS=$out/hgemm.cu"
    "hgemm_pipelined|hgemm.cu|S:PRISM_KERNELS=$out/hgemm_pipelined.cu PRISM_HGEMM=prism_launch_gemm_bf16_pipelined S:PRISM_HGEMM_LABEL=37_gemm_bf16_pipelined PRISM_HGEMM_THREADS=256 PRISM_HGEMM_TILE=128"
    "hgemm_ws|hgemm_ws.cu|S:PRISM_KERNELS=$out/hgemm_ws.cu"
    "tf32gemm|tf32gemm.cu|S:PRISM_KERNELS=$out/tf32gemm.cu"
    "tf32gemm_pipelined|tf32gemm.cu|S:PRISM_KERNELS=$out/tf32gemm_pipelined.cu PRISM_TF32_PIPELINED=1"
    "tf32gemm_ws|tf32gemm.cu|S:PRISM_KERNELS=$out/tf32gemm_ws.cu PRISM_TF32_WS=1"
    "scan|scan.cu|S:PRISM_KERNELS=$out/scan.cu"
    "scan_warp|scan.cu|S:PRISM_KERNELS=$out/scan_warp.cu PRISM_SCAN=prism_launch_scan_warp_transposed S:PRISM_SCAN_LABEL=47_scan_warp_transposed"
    "reduce|reduce.cu|S:PRISM_KERNELS=$out/reduce.cu"
    "dsum|dsum.cu|S:PRISM_KERNELS=$out/dsum.cu"
    "rows|rows.cu|S:PRISM_TRANSPOSE=$out/transpose.cu S:PRISM_SOFTMAX=$out/softmax.cu"
    "softmax_block|rows.cu|S:PRISM_SOFTMAX=$out/softmax_block.cu PRISM_SOFTMAX_BLOCK=1"
)
# The variants of bench/gpu/variants.txt (kernels built with `prism build -D`): compiled by
# --compile-only, run only when ONLY names them or VARIANTS=1.
variants=()
while IFS='|' read -r name stem dargs src defines; do
    case "$name" in '' | '#'*) continue ;; esac
    # shellcheck disable=SC2086 # the -D arguments are words
    "$prism" build "$k/$stem.prism" --emit-host $dargs -o "$out/$name.cu" >/dev/null
    harnesses+=("$name|$src|S:PRISM_KERNELS=$out/$name.cu $defines")
    variants+=("$name")
done <bench/gpu/variants.txt
compile() { # source defines [more nvcc arguments...]
    local src="$1" defines="$2" kv
    shift 2
    local defs=()
    for kv in $defines; do
        case "$kv" in
            S:*) kv="${kv#S:}"; defs+=("-D${kv%%=*}=\"${kv#*=}\"") ;;
            *) defs+=("-D$kv") ;;
        esac
    done
    "$nvcc" "${flags[@]}" "${defs[@]}" "bench/gpu/$src" "$@"
}
if [ "$compile_only" = 1 ]; then
    for h in "${harnesses[@]}"; do
        IFS='|' read -r name src defines <<<"$h"
        compile "$src" "$defines" -c -o "$out/$name.o"
    done
    echo "bench/gpu: every harness compiles for $arch"
    exit 0
fi
# ONLY=name1,name2 builds and runs a subset (a GPU call has a time limit); variants run
# only when named, or all of them with VARIANTS=1.
is_variant() { [[ " ${variants[*]} " == *" $1 "* ]]; }
wanted() {
    if [ -n "${ONLY:-}" ]; then
        [[ ",$ONLY," == *",$1,"* ]]
    elif is_variant "$1"; then
        [ "${VARIANTS:-0}" = 1 ]
    fi
}
# The harnesses compile in parallel (nvcc spends most of a GPU call otherwise).
pids=()
for h in "${harnesses[@]}"; do
    IFS='|' read -r name src defines <<<"$h"
    wanted "$name" || continue
    compile "$src" "$defines" -lcublas -o "$out/$name" &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
[ "$build_only" = 1 ] && exit 0

echo "Device: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1), $("$nvcc" --version | grep -o 'release [0-9.]*'), $(date -u +%Y-%m-%d), median of $reps runs after 3 warm-ups${PRISM_BENCH_SIZES:+, sizes: $PRISM_BENCH_SIZES}"
echo
# The harnesses run in the order ONLY names them (a session's most wanted first), else in
# the order above. With DEADLINE (seconds since the epoch) set, a harness that would start
# less than MIN_LEFT seconds before it is skipped and one still running at it is stopped,
# each with a line that says so: a GPU call ends at its limit, and what ran before still
# counts.
order=()
if [ -n "${ONLY:-}" ]; then
    IFS=',' read -r -a order <<<"$ONLY"
else
    for h in "${harnesses[@]}"; do order+=("${h%%|*}"); done
fi
status=0
for name in "${order[@]}"; do
    wanted "$name" || continue
    [ -x "$out/$name" ] || { echo "no harness \`$name\`" >&2; status=1; continue; }
    if [ -n "${DEADLINE:-}" ]; then
        left=$((DEADLINE - $(date +%s)))
        if [ "$left" -lt "${MIN_LEFT:-30}" ]; then
            echo "skipped \`$name\`: ${left} s left before the deadline"
            echo
            continue
        fi
        rc=0
        timeout --signal=KILL "$left" "$out/$name" "$reps" || rc=$?
        [ "$rc" = 137 ] && echo "stopped \`$name\` at the deadline"
        [ "$rc" = 0 ] || status=1
    else
        "$out/$name" "$reps" || status=1
    fi
    echo
done
exit $status
