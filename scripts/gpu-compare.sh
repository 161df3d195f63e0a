#!/usr/bin/env bash
# Runs every `# launch:` line of the corpus (tests/ui/**.prism) on the CPU simulator and on
# the GPU (`prism run --device cuda`) and prints a table comparing every buffer argument.
# For a session on the GPU machine: build `prism` here (cargo build --release), copy it and
# the repository over, and run this script there (nvcc from PATH, $PRISM_NVCC or
# scripts/install-nvcc.sh). Floating-point buffers are compared with a relative tolerance
# (math functions and the hardware's mma summation order may differ in the last bits).
#
# With JOBS=N (default 1), N files run at once (the machine has many cores and each GPU run
# spends most of its time in nvcc); the table is then sorted by file. PRISM_COMPILER=nvrtc
# compiles through NVRTC instead. Exits non-zero when any launch errs or differs.
#
# usage: [JOBS=N] scripts/gpu-compare.sh [PRISM_BINARY] [FILES...]
set -uo pipefail
cd "$(dirname "$0")/.."
prism="${1:-target/release/prism}"
shift || true
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
    mapfile -t files < <(grep -rl '^# launch: [a-zA-Z_]' tests/ui --include='*.prism' | sort)
fi
# The last line, from the table's rows on stdin: how many launches, how many not the same,
# how many skipped (the simulator refuses them: the corpus's deliberate bugs), how many the
# same only within the float tolerance; fails when any is not the same.
summarise() {
    local rows bad skipped inexact
    rows="$(cat)"
    bad="$(printf '%s\n' "$rows" | awk '$3 != "same" && $3 != "skipped:"' | grep -c . || true)"
    skipped="$(printf '%s\n' "$rows" | awk '$3 == "skipped:"' | grep -c . || true)"
    inexact="$(printf '%s\n' "$rows" | grep -c 'not bit for bit' || true)"
    echo "$(printf '%s\n' "$rows" | grep -c . || true) launches, $bad not the same, $skipped skipped (the simulator refuses them); $inexact of the same ones within the float tolerance but not bit for bit"
    [ "$bad" = 0 ]
}
if [ "${JOBS:-1}" -gt 1 ] && [ -z "${GPU_COMPARE_CHILD:-}" ]; then
    # Each child compares one file and prints its rows; the parent sorts and counts them.
    printf '%-60s %-28s %s\n' FILE KERNEL RESULT
    # Rows stream as they finish (a run stopped by a time limit still leaves them); the
    # sorted table follows.
    table="$(printf '%s\n' "${files[@]}" | GPU_COMPARE_CHILD=1 xargs -P "$JOBS" -n 1 "$0" "$prism" | tee /dev/stderr | sort)"
    echo "--- sorted"
    printf '%s\n' "$table"
    printf '%s\n' "$table" | summarise
    exit
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
[ -z "${GPU_COMPARE_CHILD:-}" ] && printf '%-60s %-28s %s\n' FILE KERNEL RESULT

for f in "${files[@]}"; do
    # The `# define: NAME=VALUE` lines of a file's header are the `-D` arguments it is
    # compiled with (as the corpus tests compile it), on the simulator and on the GPU.
    defs=()
    while read -r d; do defs+=(-D "$d"); done < <(awk '!/^#/ && NF { exit } /^# define:/ { sub(/^# define: */, ""); print }' "$f")
    grep '^# launch: [a-zA-Z_]' "$f" | sed 's/^# launch: //' | while read -r line; do
        read -r -a words <<<"$line"
        kernel="${words[0]}"
        rest=("${words[@]:1}")
        outs=()
        declare -A dtype=()
        for ((i = 0; i < ${#rest[@]}; i++)); do
            if [ "${rest[$i]}" = "--arg" ]; then
                kv="${rest[$((i + 1))]}"
                name="${kv%%=*}"; value="${kv#*=}"
                case "$value" in
                    *:*) outs+=("$name"); t="${value#*:}"; dtype[$name]="${t%%:*}" ;;
                    *.npy) outs+=("$name"); dtype[$name]=npy ;;
                esac
            fi
        done
        status="same"
        # The simulator runs with every check, so the corpus's deliberate bugs (races,
        # divergent barriers, deadlocks, out-of-bounds indices) are refused there: they have
        # no defined GPU behaviour, may hang the GPU, and are not run on it ("skipped").
        # Two more simulator runs under randomised schedules find the buffers whose contents
        # depend on the schedule (atomic order, `atomic_exch` winners, float sums by
        # atomics): those are not compared.
        for dev in sim seed1 seed2 cuda; do
            args=()
            for o in "${outs[@]}"; do args+=(--out "$o=$tmp/$dev-$o.npy"); done
            case "$dev" in
                sim) how=(--device sim --checks all) ;;
                seed*) how=(--device sim --checks none --seed "${dev#seed}") ;;
                # GPU_COMPARE_DEVICE=sim stands a third simulator schedule in for the GPU:
                # CI runs the script so, to keep it working between GPU sessions.
                cuda) if [ "${GPU_COMPARE_DEVICE:-cuda}" = sim ]; then how=(--device sim --checks none --seed 3); else how=(--device cuda); fi ;;
            esac
            SECONDS=0
            if ! timeout "${RUN_LIMIT:-30}" "$prism" run "$f" "${defs[@]}" --kernel "$kernel" "${rest[@]}" "${how[@]}" "${args[@]}" \
                >"$tmp/$dev.log" 2>&1; then
                reason="$(grep -m1 error "$tmp/$dev.log" || echo "stopped after ${SECONDS}s")"
                if [ "$dev" = sim ]; then status="skipped: $reason"; break; fi
                status="error on $dev: $reason"
            fi
            [ "$SECONDS" -ge 10 ] && echo "slow: $f $kernel on $dev took ${SECONDS}s" >&2
        done
        if [ "$status" = "same" ]; then
            unordered=()
            inexact=()
            for o in "${outs[@]}"; do
                if ! cmp -s "$tmp/sim-$o.npy" "$tmp/seed1-$o.npy" || ! cmp -s "$tmp/sim-$o.npy" "$tmp/seed2-$o.npy"; then
                    unordered+=("$o")
                    continue
                fi
                if ! diff="$(python3 - "$tmp/sim-$o.npy" "$tmp/cuda-$o.npy" "${dtype[$o]}" 2>&1 <<'PY'
import sys
import numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
dtype = sys.argv[3]
if a.shape != b.shape:
    print(f"shape {a.shape} against {b.shape}")
    sys.exit(1)
if dtype == "bf16":
    # NumPy has no bfloat16: prism writes the raw bits as <u2.
    a, b = ((x.astype(np.uint32) << 16).view(np.float32) for x in (a, b))
if a.dtype.kind == "f":
    # Tolerances per element type: the GPU's math functions and its tensor cores' summation
    # order differ from the simulator's in the last bits. The second term scales with the
    # buffer's largest value (a gemm's cancelling sums have no useful relative error).
    tol = {"f16": 2e-3, "bf16": 1.6e-2}.get(dtype, 1e-5)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    finite = np.isfinite(b64)
    scale = max(1.0, float(np.abs(b64[finite]).max())) if finite.any() else 1.0
    err = np.abs(a64 - b64)
    same_nan = np.isnan(a64) & np.isnan(b64)
    same_inf = np.isinf(a64) & (a64 == b64)
    bad = ~(same_nan | same_inf) & ~(err <= tol * np.abs(b64) + tol * scale)
    if bad.any():
        i = np.unravel_index(np.argmax(np.where(bad, err, -1)), a.shape)
        print(f"{int(bad.sum())} of {a.size} elements, worst at {tuple(int(x) for x in i)}: sim {a64[i]!r}, gpu {b64[i]!r} (scale {scale:.3g})")
        sys.exit(1)
    # Within the tolerance; say how many elements are not the same bits (NaNs of any
    # payload count as the same), so a run shows where floats are bit for bit.
    bits = a.view(np.uint16 if a.itemsize == 2 else np.uint32 if a.itemsize == 4 else np.uint64)
    other = b.view(bits.dtype)
    inexact = int(((bits != other) & ~same_nan).sum())
    if inexact:
        print(f"{inexact} of {a.size}")
elif not np.array_equal(a, b):
    bad = a != b
    i = np.unravel_index(np.argmax(bad), a.shape)
    print(f"{int(bad.sum())} of {a.size} elements, first at {tuple(int(x) for x in i)}: sim {a[i]!r}, gpu {b[i]!r}")
    sys.exit(1)
PY
)"; then
                    status="differs in $o: $diff"
                elif [ -n "$diff" ]; then
                    inexact+=("$o $diff")
                fi
            done
            if [ ${#unordered[@]} -gt 0 ] && [ "$status" = "same" ]; then
                status="same (schedule-dependent, not compared: ${unordered[*]})"
            fi
            if [ ${#inexact[@]} -gt 0 ] && [ "${status%% *}" = "same" ]; then
                status="$status (within tolerance, not bit for bit: $(IFS=,; echo "${inexact[*]}"))"
            fi
        fi
        printf '%-60s %-28s %s\n' "$f" "$kernel" "$status" | tee -a "$tmp/rows"
    done
done
if [ -z "${GPU_COMPARE_CHILD:-}" ]; then
    { cat "$tmp/rows" 2>/dev/null || true; } | summarise
fi
