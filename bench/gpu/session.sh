#!/usr/bin/env bash
# The agenda of a session with a GPU, in the order issue 10 asks for. A session that is lent
# a GPU builds `prism` on the development machine (`cargo build --release`, then `mkdir -p
# .dev && strip -o .dev/prism target/release/prism`), carries `.dev` over and runs, in ONE
# call of the GPU machine (timeout_s 600),
#
#   bench/gpu/session.sh all .dev/prism
#
# then gives the machine back and pastes what came back under $OUT into BENCHMARKS.md ("GPU
# runs") with the device, date, driver and nvcc version the bench steps print. A session has
# 15 minutes of device time in all, the machine's start (one to two minutes) and its idle
# time included, and no machine starts with less than 4 minutes left: one call of about nine
# minutes is what fits. `all` runs every step below in order of what the open questions need
# most, under one deadline (BUDGET seconds, default 540): a harness that would start too
# close to it is skipped with a line that says so, one running at it is stopped, and each
# step's output is in $OUT as soon as it is written, so a call cut short still brings back
# everything before the cut. The lists below are the open questions of the last session
# without a GPU; edit them when a run has answered one.
#
#   all         compare, then bench (full sizes), then sweep (sizes of the targets only:
#               PRISM_BENCH_SIZES=targets), then profile, within BUDGET seconds
#   compare     every `# launch:` of the corpus on the GPU against the simulator (~70 s),
#               then the probes: which lane elect_sync elects and the bits of NaNs, on the
#               GPU beside the simulator ($OUT/probes.txt)
#   bench       the new candidates against cuBLAS and CUB at every size (`bench/gpu/run.sh`,
#               10 runs each)
#   sweep       the variants and the kernels measured before, at the targets' sizes
#   profile     Nsight Compute on cuBLAS's own sgemm and kernels 51 and 50 at 4096^3
#   summary     the rows of $OUT/bench.txt and $OUT/sweep.txt at the targets' sizes, best
#               ratio first (`all` ends with it)
#   check       (no GPU; CI) every name the steps pass to ONLY= is a harness of
#               bench/gpu/run.sh or a variant of bench/gpu/variants.txt
#
# The steps also run one by one (`session.sh bench .dev/prism`), each within a call.
set -euo pipefail
cd "$(dirname "$0")/../.."
step="${1:?usage: bench/gpu/session.sh all|compare|bench|sweep|profile|summary|check PRISM_BINARY [BUDGET]}"
prism="${2:-.dev/prism}"
log() { # name: tee the step's output into $OUT/name.txt when $OUT is set
    if [ -n "${OUT:-}" ]; then tee "$OUT/$1.txt"; else cat; fi
}
# The harnesses and variants each step runs, most wanted first. bench: the candidates for
# the targets that have never run on a GPU (kernels 51, 50 and 46 for the sgemm, 47 for the
# scan), and the device sum, softmax and tf32 gemm rebuilt since the last GPU session.
bench_list=gemm_prefetch,gemm_wide,scan_warp,gemm_deep_k,dsum,softmax_block,tf32gemm_ws
# sweep: the scan with CUB's shape and delays, the sgemm variants on cuBLAS's tiles, the
# device sum with more loads in flight, then the rest, then what the first GPU session
# measured (for the same run's baseline figures).
sweep_list=scan_warp_nodelay,scan_warp_128x24,scan_warp_128x24_nodelay,gemm_prefetch_128x256,gemm_prefetch_256x128,gemm_prefetch_s4,gemm_prefetch_bk16,dsum_items4_b4,dsum_items8,dsum_b4,gemm_wide_128x256,gemm_wide_256x128,gemm_wide_128x256_s4,gemm_wide_bk16,gemm_wide_s4,gemm_wide_s2,gemm_wide_bk16_s4,gemm_deep_k_bk24,gemm_deep_k_bk24_s4,gemm_deep_k_kh4,gemm_deep_k_bk16,gemm_deep_k_bk16_s4,gemm_deep_k_s2,gemm_deep_k_s4,gemm_deep_k_lb1,scan_warp_256x24,scan_warp_512x8,scan_warp_128x16,scan_warp_256x12,softmax_block_128x32,softmax_block_512x8,softmax_block_1024x4,gemm_pipelined,scan,reduce,tf32gemm,hgemm_ws,rows,hgemm_pipelined,tf32gemm_pipelined,hgemm_pipelined_bk32,hgemm_pipelined_bk64_s3,tf32gemm_pipelined_bk16,tf32gemm_pipelined_bk32_s3
# LIMIT: seconds a step may run before it is stopped (all of it, children included: GNU
# timeout signals its process group); `all` sets it from the deadline.
LIMIT="${LIMIT:-1000000}"
compare() {
    JOBS="${JOBS:-16}" timeout --signal=KILL "$LIMIT" scripts/gpu-compare.sh "$prism" 2>/dev/null | log compare
    probes 2>&1 | log probes
}
# What PTX or the hardware decide and no GPU run has shown, on the GPU beside the simulator:
# which lane elect_sync elects, one mark per warp (PTX leaves it unspecified; the
# simulator's deterministic schedule elects each warp's lowest, lanes 0 and 32), and the
# bits of NaNs made by arithmetic, math functions and conversions, in float and double
# (bench/gpu/probes.prism says which and what the last GPU run found).
probes() {
    local dir
    dir="$(mktemp -d)"
    for dev in sim cuda; do
        echo "== $dev"
        timeout --signal=KILL 60 "$prism" run tests/ui/accept/rules/elect_sync.prism --kernel which_lane \
            --grid 1 --block 64 --arg marks=zeros:i32:64 --device "$dev" --print marks 2>&1 | grep -v '^ran '
        if timeout --signal=KILL 60 "$prism" run bench/gpu/probes.prism --kernel nan_bits --grid 1 --block 32 \
            --arg zero=zeros:f32:32 --arg f=zeros:f32:32 --arg d=zeros:f64:32 --device "$dev" \
            --out "f=$dir/f.npy" --out "d=$dir/d.npy" >"$dir/log" 2>&1; then
            echo "float NaN bits (pairs: 0/0, inf-inf, NaN+1, NaN*0, sqrt(-1), fma(inf,0,1), log(-1), exp(NaN), double NaN to float, abs(NaN)): $(python3 bench/gpu/npy_bits.py "$dir/f.npy" 20)"
            echo "double NaN bits (the same; pair 9 converts float's NaN to double): $(python3 bench/gpu/npy_bits.py "$dir/d.npy" 20)"
        else
            echo "nan_bits on $dev: $(grep -m1 error "$dir/log")"
        fi
    done
    rm -rf "$dir"
}
bench() {
    ONLY="$bench_list" bench/gpu/run.sh "$prism" 10 | log bench
}
sweep() {
    PRISM_BENCH_SIZES=targets ONLY="$sweep_list" bench/gpu/run.sh "$prism" 10 | log sweep
}
profile() {
    # The harness runs 1024^3, 2048^3, 4096^3 ... each 3 + 1 times: skip 8 launches of a
    # kernel to profile its 4096^3 one. cuBLAS's kernel is named `sm80_xmma_gemm_...`
    # (BENCHMARKS.md, "cuBLAS's FP32 gemm on sm_90a"); if it picks kernels of other names
    # at other sizes, the skip counts only the matching ones: check the size that `ncu`
    # reports.
    timeout --signal=KILL "$LIMIT" bash -c "
        bench/gpu/profile.sh '$prism' gemm_wide 'sm80_xmma_gemm' 8 1
        bench/gpu/profile.sh '$prism' gemm_prefetch 'sgemm_prefetch' 8 1
        bench/gpu/profile.sh '$prism' gemm_wide 'sgemm_wide' 8 1" 2>&1 | log profile
}
# The rows at issue 10's target sizes from the bench and sweep tables, best ratio first per
# size and baseline: which kernel or variant to promote, at a glance.
summary() {
    local dir="${OUT:-.}"
    cat "$dir/bench.txt" "$dir/sweep.txt" 2>/dev/null |
        awk -F'|' '$3 ~ /^ (4096x4096x4096|8192x8192x8192|4096\^3|8192\^3|2\^28) $/ && $4 ~ /[0-9]/ {
            gsub(/^ +| +$/, "", $2); gsub(/^ +| +$/, "", $3); gsub(/^ +| +$/, "", $5); gsub(/^ +| +%?$/, "", $7)
            sub(/%$/, "", $7)
            printf "%s | %s | %s%% | %s\n", $3, $5, $7, $2
        }' | sort -t'|' -k1,1 -k2,2 -k3,3gr | log summary
}
case "$step" in
    check)
        known="$(grep -oE '^    "[a-z0-9_]+\|' bench/gpu/run.sh | tr -d ' "|'; grep -oE '^[a-z0-9_]+\|' bench/gpu/variants.txt | tr -d '|')"
        bad=0
        for name in $(echo "$bench_list,$sweep_list" | tr ',' ' '); do
            if ! grep -qx "$name" <<<"$known"; then
                echo "bench/gpu/session.sh names \`$name\`, which is no harness or variant" >&2
                bad=1
            fi
        done
        [ "$bad" = 0 ] && echo "bench/gpu/session.sh: every harness and variant it names exists"
        exit "$bad"
        ;;
    all)
        budget="${3:-540}"
        start=$(date +%s)
        export DEADLINE=$((start + budget)) MIN_LEFT=20
        # Each step goes on whatever the one before found (a differing output is reported
        # in its table and exits non-zero; the next step still runs).
        LIMIT=$((budget / 4)) compare || echo "compare: stopped at $((budget / 4)) s or failed"
        bench || true
        sweep || true
        if [ $((DEADLINE - $(date +%s))) -ge 150 ]; then
            LIMIT=$((DEADLINE - $(date +%s))) profile || true
        else
            echo "profile skipped: $((DEADLINE - $(date +%s))) s left" | log profile
        fi
        summary || true
        echo "session.sh all: $(($(date +%s) - start)) s of a budget of $budget s"
        ;;
    compare) compare ;;
    bench) bench ;;
    sweep) sweep ;;
    profile) profile ;;
    summary) summary ;;
    *)
        echo "unknown step \`$step\`: all, compare, bench, sweep, profile, summary or check" >&2
        exit 2
        ;;
esac
