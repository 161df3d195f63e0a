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
# minutes is what fits (on 2026-11-28 the machine started in about 30 s and the call took
# 314 s, so a second, shorter call on the still-warm machine fitted as well). `all` runs every step below in order of what the open questions need
# most, under one deadline (BUDGET seconds, default 540): a harness that would start too
# close to it is skipped with a line that says so, one running at it is stopped, and each
# step's output is in $OUT as soon as it is written, so a call cut short still brings back
# everything before the cut. The lists below are the open questions the last session left;
# edit them when a run has answered one.
#
#   all         compare, then bench (full sizes), then profile, then sweep (sizes of the
#               targets only: PRISM_BENCH_SIZES=targets), within BUDGET seconds
#   compare     every `# launch:` of the corpus on the GPU against the simulator (~70 s),
#               then the probes: which lane elect_sync elects and the bits of NaNs, on the
#               GPU beside the simulator ($OUT/probes.txt)
#   bench       the promoted defaults and open candidates against cuBLAS and CUB at every size (`bench/gpu/run.sh`,
#               10 runs each)
#   sweep       the variants and the kernels measured before, at the targets' sizes
#   profile     Nsight Compute on cuBLAS's own sgemm, kernels 46 and 51 and the
#               hand-written CUDA of 51 at 4096^3, with the reasons warps stall and the SASS
#               lines they stall on
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
# The harnesses and variants each step runs, most wanted first. bench: the defaults the
# 2026-11-28 run promoted (kernel 46 at K steps of 32, 47 with CUB's delays, 42 at 16 items
# and 8 blocks per SM), measured so far only at the targets' sizes, then 51, 49 and 48 for
# the same run's figures. gemm_prefetch_hand: the SASS gate's hand-written CUDA of kernel
# 51, so that the sgemm gap splits into what Prism's CUDA loses to an expert's (the promise)
# and what any nvcc-compiled CUDA loses to cuBLAS's hand-assembled SASS.
bench_list=gemm_deep_k,gemm_prefetch_hand,gemm_prefetch,scan_warp,dsum,softmax_block,tf32gemm_ws
# sweep: first the Hopper gemms with and without late stages in one run (kernel 38 late by
# default since 2026-11-29 and never measured so; `hgemm_ws_early` is its earlier form, and
# `tf32gemm_ws_late` kernel 48 made late, beside bench's `tf32gemm_ws`), then the mma.sync
# gemms' wide warp tiles (64 x 64 per warp, B through ldmatrix.x4, 2026-11-29: never
# measured) beside their defaults (which now load B through .x4 as well), then softmax 49's
# old default in the same run as its new one, then what earlier sessions measured, for
# continuity. Kernel 46's depths, the scan's and the sum's variants were answered on
# 2026-11-28 (nothing beat the promoted defaults) and are left out.
sweep_list=hgemm_ws,hgemm_ws_early,tf32gemm_ws_late,hgemm_pipelined,hgemm_pipelined_w64_128x256,hgemm_pipelined_w64_128x256_s3,hgemm_pipelined_w64_128x128,hgemm_pipelined_w64_256x128,hgemm_pipelined_w64_128x256_bk64_s3,tf32gemm_pipelined,tf32gemm_pipelined_w64_128x256,tf32gemm_pipelined_w64_128x256_bk32_s3,tf32gemm_pipelined_w64_128x128,tf32gemm_pipelined_w64_256x128,tf32gemm_pipelined_rz,tf32gemm_pipelined_w64_128x256_rz,softmax_block_256x16,gemm_prefetch_s4,gemm_deep_k_s2,tf32gemm,gemm_wide,scan,reduce,rows
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
    # probe KERNEL FILE ARGS...: runs KERNEL on $dev, its log in $dir/log; on failure says so.
    probe() {
        local kernel="$1" file="$2"
        shift 2
        timeout --signal=KILL 60 "$prism" run "$file" --kernel "$kernel" --device "$dev" "$@" >"$dir/log" 2>&1 ||
            { echo "$kernel on $dev: $(grep -m1 error "$dir/log")"; return 1; }
    }
    for dev in sim cuda; do
        echo "== $dev"
        timeout --signal=KILL 60 "$prism" run tests/ui/accept/rules/elect_sync.prism --kernel which_lane \
            --grid 1 --block 64 --arg marks=zeros:i32:64 --device "$dev" --print marks 2>&1 | grep -v '^ran '
        if probe nan_bits bench/gpu/probes.prism --grid 1 --block 32 --arg zero=zeros:f32:32 \
            --arg f=zeros:f32:32 --arg d=zeros:f64:32 --out "f=$dir/f.npy" --out "d=$dir/d.npy"; then
            echo "float NaN bits (pairs: 0/0, inf-inf, NaN+1, NaN*0, sqrt(-1), fma(inf,0,1), log(-1), exp(NaN), double NaN to float, abs(NaN)): $(python3 bench/gpu/npy_bits.py "$dir/f.npy" 20)"
            echo "double NaN bits (the same; pair 9 converts float's NaN to double): $(python3 bench/gpu/npy_bits.py "$dir/d.npy" 20)"
        fi
        # Unusual float NaNs to half and bf16, and what the tensor cores make of NaNs and
        # of payloads only in the bits tf32 drops (bench/gpu/special_bits.py says which).
        python3 bench/gpu/special_bits.py nan16 "$dir"
        if probe nan16 bench/gpu/probes.prism --grid 1 --block 32 --arg "x=$dir/x.npy" --arg h=zeros:u32:32 \
            --arg b=zeros:u32:32 --out "h=$dir/h.npy" --out "b=$dir/b.npy"; then
            echo "float to half bits (special_bits.py NAN16 in order): $(python3 bench/gpu/npy_bits.py "$dir/h.npy" 32)"
            echo "float to bf16 bits (the same): $(python3 bench/gpu/npy_bits.py "$dir/b.npy" 32)"
        fi
        # 16-bit NaNs of arithmetic, double min/max of two NaNs, and folded float identities
        # of a NaN (probes.prism's `nan_half` says which; review R40).
        python3 bench/gpu/special_bits.py nanhalf "$dir"
        if probe nan_half bench/gpu/probes.prism --grid 1 --block 32 --arg zero=zeros:f32:32 --arg "fs=$dir/fs.npy" \
            --arg "ds=$dir/ds.npy" --arg h=zeros:u32:32 --arg b=zeros:u32:32 --arg f=zeros:u32:32 \
            --arg d=zeros:f64:32 --out "h=$dir/nh.npy" --out "b=$dir/nb.npy" --out "f=$dir/nf.npy" --out "d=$dir/nd.npy"; then
            echo "half NaN bits (pairs: 0/0, inf-inf, NaN+1, NaN*0, sqrt(-1), converted NaN+1): $(python3 bench/gpu/npy_bits.py "$dir/nh.npy" 12)"
            echo "bf16 NaN bits (the same): $(python3 bench/gpu/npy_bits.py "$dir/nb.npy" 12)"
            echo "float of a NaN input, threads 12-15 (x*1, min(x,x), max(x,x), x/1): $(python3 bench/gpu/npy_bits.py "$dir/nf.npy" 16)"
            echo "double min/max of two NaNs (even min, odd max): $(python3 bench/gpu/npy_bits.py "$dir/nd.npy" 2)"
        fi
        python3 bench/gpu/special_bits.py mma "$dir"
        if probe mma_both tests/ui/accept/rules/mma_tf32_rz.prism --grid 1 --block 32 --arg "a=$dir/a.npy" \
            --arg "bm=$dir/b.npy" --arg "c=$dir/c.npy" --arg d_rn=zeros:f32:128 --arg d_rz=zeros:f32:128 \
            --out "d_rn=$dir/rn.npy" --out "d_rz=$dir/rz.npy"; then
            python3 bench/gpu/mma_bits.py "$dir/rn.npy" "$dir/rz.npy"
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
    # reports. STALLS=1: the reasons warps did not issue (the 2026-11-28 profiles showed
    # kernel 51 with no eligible warp in 27% of cycles against cuBLAS's 11%, and dispatch
    # stalls nine times cuBLAS's in kernel 46), and the SASS lines they sit on; the last
    # profile is the hand-written CUDA of kernel 51 (gemm_prefetch_hand), whose stalls say
    # whether nvcc's code for any CUDA of this loop stalls where Prism's does.
    timeout --signal=KILL "$LIMIT" bash -c "
        STALLS=1 bench/gpu/profile.sh '$prism' gemm_deep_k 'sm80_xmma_gemm' 8 1
        STALLS=1 bench/gpu/profile.sh '$prism' gemm_deep_k 'sgemm_deep_k' 8 1
        STALLS=1 bench/gpu/profile.sh '$prism' gemm_prefetch 'sgemm_prefetch' 8 1
        STALLS=1 bench/gpu/profile.sh '$prism' gemm_prefetch_hand 'sgemm_prefetch' 8 1" 2>&1 | log profile
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
        # The profile before the sweep: where the sgemm's stalls sit is what the FP32 target
        # waits on; the sweep takes what time is left. The profile gets at most 240 s and
        # leaves 60 s for the sweep.
        left=$((DEADLINE - $(date +%s)))
        if [ "$left" -ge 150 ]; then
            LIMIT=$((left - 60 < 240 ? left - 60 : 240)) profile || true
        else
            echo "profile skipped: $left s left" | log profile
        fi
        sweep || true
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
