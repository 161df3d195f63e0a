#!/usr/bin/env bash
# CI's check of scripts/gpu-compare.sh (which otherwise runs only on a GPU machine, where a
# broken script costs device time): the script runs on a few corpus files with another
# simulator schedule standing in for the GPU (GPU_COMPARE_DEVICE=sim), and must skip the
# deliberate bugs, mark the schedule-dependent buffers, compare bf16 and float outputs, and
# end with every launch the same. Needs python3 with NumPy on PATH (.ci/run puts the Python
# package's test venv first).
set -euo pipefail
cd "$(dirname "$0")/.."
prism="${1:-target/release/prism}"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
GPU_COMPARE_DEVICE=sim JOBS=2 scripts/gpu-compare.sh "$prism" \
    tests/ui/run/checks/data_race.prism \
    tests/ui/accept/rules/corner_intrinsics_thread.prism \
    tests/ui/accept/kernels/38_hgemm_warp_specialised.prism \
    tests/ui/accept/kernels/01_saxpy_grid_stride.prism \
    tests/ui/accept/rules/bad-define.prism >"$out" 2>/dev/null || {
    cat "$out"
    echo "gpu-compare: failed" >&2
    exit 1
}
fail() { cat "$out"; echo "gpu-compare: $1" >&2; exit 1; }
grep -q ' 0 not the same' "$out" || fail "expected every launch the same"
grep -q 'buggy_shared .*skipped: error\[data-race\]' "$out" || fail "expected the racy kernel skipped"
grep -q 'fixed_atomic_plain .*same (schedule-dependent, not compared: out)' "$out" || fail "expected a schedule-dependent buffer"
grep -q '38_hgemm_warp_specialised.prism .*hgemm .*same$' "$out" || fail "expected the bf16 gemm compared"
echo "gpu-compare: $(tail -1 "$out")"
