#!/usr/bin/env bash
# CI's check of scripts/gpu-compare.sh (which otherwise runs only on a GPU machine, where a
# broken script costs device time): the script runs on a few corpus files with another
# simulator schedule standing in for the GPU (GPU_COMPARE_DEVICE=sim), and must skip the
# deliberate bugs, mark the schedule-dependent buffers, compare bf16 and float outputs, and
# end with every launch the same; its float comparison is also run on crafted buffers
# (within the tolerance but not bit for bit, NaN payloads, far off). Needs python3 with
# NumPy on PATH (.ci/run puts the Python package's test venv first).
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
grep -q ' 0 not the same, 20 skipped ' "$out" || fail "expected every launch the same and the twenty deliberate bugs skipped"
grep -q 'buggy_shared .*skipped: error\[data-race\]' "$out" || fail "expected the racy kernel skipped"
grep -q 'fixed_atomic_plain .*same (schedule-dependent, not compared: out)' "$out" || fail "expected a schedule-dependent buffer"
grep -q '38_hgemm_warp_specialised.prism .*hgemm .*same$' "$out" || fail "expected the bf16 gemm compared"
# The float comparison itself, on crafted buffers: one element a unit in the last place
# off is the same within the tolerance but not bit for bit; NaNs of other payloads are the
# same bits for it; one element far off differs.
cmp_py="$(mktemp)"
trap 'rm -f "$out" "$cmp_py"' EXIT
awk "/<<'PY'/{f=1;next} /^PY\$/{f=0} f" scripts/gpu-compare.sh >"$cmp_py"
verdicts="$(python3 - "$cmp_py" <<'PY'
import subprocess, sys, tempfile, os
import numpy as np
d = tempfile.mkdtemp()
a = np.arange(1, 101, dtype=np.float32) / 7
a[5] = np.float32("nan")
def run(b):
    np.save(os.path.join(d, "a.npy"), a)
    np.save(os.path.join(d, "b.npy"), b)
    r = subprocess.run([sys.executable, sys.argv[1], os.path.join(d, "a.npy"), os.path.join(d, "b.npy"), "f32"],
                       capture_output=True, text=True)
    return f"{r.returncode}:{r.stdout.strip()}"
ulp = a.copy(); ulp[3] = np.nextafter(ulp[3], np.float32(100))
payload = a.copy(); payload[5] = np.frombuffer(np.uint32(0x7FFFFFFF).tobytes(), dtype=np.float32)[0]
far = a.copy(); far[7] += 1
print(run(a.copy()), run(ulp), run(payload), run(far).split(" ")[0], sep="|")
PY
)"
[ "$verdicts" = "0:|0:1 of 100|0:|1:1" ] || fail "the float comparison said $verdicts"
echo "gpu-compare: $(tail -1 "$out")"
