#!/usr/bin/env bash
# Runs every `# launch:` line of the corpus (tests/ui/**.prism) on the CPU simulator and on
# the GPU (`prism run --device cuda`) and prints a table comparing every buffer argument.
# For a session on the GPU machine: build `prism` here (cargo build --release), copy it and
# the repository over, and run this script there (nvcc from PATH, $PRISM_NVCC or
# scripts/install-nvcc.sh). Floating-point buffers are compared with a relative tolerance
# (math functions and the hardware's mma summation order may differ in the last bits).
#
# usage: scripts/gpu-compare.sh [PRISM_BINARY] [FILES...]
set -uo pipefail
cd "$(dirname "$0")/.."
prism="${1:-target/release/prism}"
shift || true
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
    mapfile -t files < <(grep -rl '^# launch: [a-zA-Z_]' tests/ui --include='*.prism' | sort)
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
printf '%-60s %-28s %s\n' FILE KERNEL RESULT

for f in "${files[@]}"; do
    grep '^# launch: [a-zA-Z_]' "$f" | sed 's/^# launch: //' | while read -r line; do
        read -r -a words <<<"$line"
        kernel="${words[0]}"
        rest=("${words[@]:1}")
        outs=()
        for ((i = 0; i < ${#rest[@]}; i++)); do
            if [ "${rest[$i]}" = "--arg" ]; then
                kv="${rest[$((i + 1))]}"
                name="${kv%%=*}"; value="${kv#*=}"
                case "$value" in *:*|*.npy) outs+=("$name") ;; esac
            fi
        done
        status="same"
        for dev in sim cuda; do
            args=()
            for o in "${outs[@]}"; do args+=(--out "$o=$tmp/$dev-$o.npy"); done
            if ! "$prism" run "$f" --kernel "$kernel" "${rest[@]}" --device "$dev" --checks none "${args[@]}" \
                >"$tmp/$dev.log" 2>&1; then
                status="error on $dev: $(grep -m1 error "$tmp/$dev.log")"
            fi
        done
        if [ "$status" = "same" ]; then
            for o in "${outs[@]}"; do
                if ! python3 - "$tmp/sim-$o.npy" "$tmp/cuda-$o.npy" <<'PY'
import sys
import numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
if a.dtype.kind == 'f':
    ok = np.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)
else:
    ok = np.array_equal(a, b)
sys.exit(0 if ok else 1)
PY
                then status="differs in $o"; fi
            done
        fi
        printf '%-60s %-28s %s\n' "$f" "$kernel" "$status"
    done
done
