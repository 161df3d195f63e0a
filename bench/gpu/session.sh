#!/usr/bin/env bash
# The agenda of a session with a GPU, in the order issue 10 asks for, cut into steps that
# each fit one call of the GPU machine (10 minutes): a session that is lent a GPU builds
# `prism` on the development machine (`cargo build --release`, then `mkdir -p .dev && strip
# -o .dev/prism target/release/prism`), carries `.dev` over and runs
#
#   bench/gpu/session.sh STEP .dev/prism
#
# for STEP = compare, bench, sweep-gemm, sweep-rest, profile in turn, pasting what each
# prints into BENCHMARKS.md ("GPU runs") with the device, date, driver and nvcc version the
# bench steps print. Each step writes its output to $OUT (the device tool's folder that
# comes back) when set, and to stdout. The lists below are the open questions of the last
# session without a GPU; edit them when a sweep has answered one.
#
#   compare     every `# launch:` of the corpus on the GPU against the simulator (~70 s)
#   bench       the fast kernels against cuBLAS and CUB (`bench/gpu/run.sh`, 10 runs each)
#   sweep-gemm  the fp32 gemm variants (kernels 51 and 50 on cuBLAS's tiles, 46's depths)
#   sweep-rest  the scan, softmax and device-sum variants
#   profile     Nsight Compute on cuBLAS's own sgemm and kernels 51 and 50 at 4096^3
#   check       (no GPU; CI) every name the steps pass to ONLY= is a harness of
#               bench/gpu/run.sh or a variant of bench/gpu/variants.txt
set -euo pipefail
cd "$(dirname "$0")/../.."
step="${1:?usage: bench/gpu/session.sh compare|bench|sweep-gemm|sweep-rest|profile PRISM_BINARY}"
prism="${2:-.dev/prism}"
log() { # name: tee the step's output into $OUT/name.txt when $OUT is set
    if [ -n "${OUT:-}" ]; then tee "$OUT/$1.txt"; else cat; fi
}
# The harnesses and variants each step runs.
bench_list=gemm_prefetch,gemm_wide,gemm_deep_k,gemm_pipelined,scan,scan_warp,reduce,dsum,tf32gemm,tf32gemm_ws,hgemm_ws,rows,softmax_block
sweep_gemm_list=gemm_prefetch_128x256,gemm_prefetch_256x128,gemm_prefetch_s4,gemm_prefetch_bk16,gemm_wide_128x256,gemm_wide_256x128,gemm_wide_128x256_s4,gemm_wide_bk16,gemm_wide_s4,gemm_wide_s2,gemm_wide_bk16_s4,gemm_deep_k_bk32,gemm_deep_k_s4,gemm_deep_k_lb1,gemm_deep_k_lb1_s4
sweep_rest_list=scan_warp_128x24,scan_warp_128x24_delay,scan_warp_256x16_delay,scan_warp_256x24,scan_warp_512x8,scan_warp_128x16,scan_warp_256x12,softmax_block_128x32,softmax_block_512x8,softmax_block_1024x4,dsum_items8,dsum_items16
case "$step" in
    check)
        known="$(grep -oE '^    "[a-z0-9_]+\|' bench/gpu/run.sh | tr -d ' "|'; grep -oE '^[a-z0-9_]+\|' bench/gpu/variants.txt | tr -d '|')"
        bad=0
        for name in $(echo "$bench_list,$sweep_gemm_list,$sweep_rest_list" | tr ',' ' '); do
            if ! grep -qx "$name" <<<"$known"; then
                echo "bench/gpu/session.sh names \`$name\`, which is no harness or variant" >&2
                bad=1
            fi
        done
        [ "$bad" = 0 ] && echo "bench/gpu/session.sh: every harness and variant it names exists"
        exit "$bad"
        ;;
    compare)
        JOBS="${JOBS:-16}" scripts/gpu-compare.sh "$prism" 2>/dev/null | log compare
        ;;
    bench)
        ONLY="$bench_list" bench/gpu/run.sh "$prism" 10 | log bench
        ;;
    sweep-gemm)
        ONLY="$sweep_gemm_list" bench/gpu/run.sh "$prism" 10 | log sweep-gemm
        ;;
    sweep-rest)
        ONLY="$sweep_rest_list" bench/gpu/run.sh "$prism" 10 | log sweep-rest
        ;;
    profile)
        # The harness runs 1024^3, 2048^3, 4096^3 ... each 3 + 1 times: skip 8 launches of
        # a kernel to profile its 4096^3 one. cuBLAS's kernel is named `sm80_xmma_gemm_...`
        # (BENCHMARKS.md, "cuBLAS's FP32 gemm on sm_90a"); if it picks kernels of other
        # names at other sizes, the skip counts only the matching ones: check the size
        # that `ncu` reports.
        {
            bench/gpu/profile.sh "$prism" gemm_wide 'sm80_xmma_gemm' 8 1
            bench/gpu/profile.sh "$prism" gemm_prefetch 'sgemm_prefetch' 8 1
            bench/gpu/profile.sh "$prism" gemm_wide 'sgemm_wide' 8 1
        } 2>&1 | log profile
        ;;
    *)
        echo "unknown step \`$step\`: compare, bench, sweep-gemm, sweep-rest, profile or check" >&2
        exit 2
        ;;
esac
