#!/usr/bin/env bash
# CI's check of `bench/gpu/session.sh all` (which otherwise runs only on a GPU machine, in
# the one call a session's device time allows, where a broken agenda costs that call): the
# agenda runs here under a short budget with stand-ins for `nvidia-smi` and `nvcc` on PATH.
# The stand-in nvcc writes, for each harness it is asked to build, a program that prints one
# table row in the harnesses' format at a target size and takes two seconds (so that the
# agenda's lists outlast the budget). The test checks what a GPU session relies on: every
# step's output lands in $OUT, the comparison is stopped at its share of the budget, the
# candidates run in the order the agenda names them, the sweep runs at the targets' sizes,
# harnesses past the deadline are skipped with a line that says so, the profile is skipped
# when too little time is left, and the summary lists the rows at the targets' sizes, best
# ratio first.
set -euo pipefail
cd "$(dirname "$0")/.."
prism="${1:-target/release/prism}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/out"
cat >"$work/bin/nvidia-smi" <<'EOF'
#!/bin/sh
case "$*" in
    *compute_cap*) echo 9.0 ;;
    *driver_version*) echo 000.00 ;;
    *name*) echo "Stand-in GPU" ;;
esac
EOF
cat >"$work/bin/nvcc" <<'EOF'
#!/usr/bin/env bash
# The output path follows -o; the harness's name is its file name.
[ "${1:-}" = --version ] && { echo "Cuda compilation tools, release 0.0"; exit 0; }
o=""
prev=""
for a in "$@"; do
    [ "$prev" = -o ] && o="$a"
    prev="$a"
done
name="$(basename "$o")"
# A ratio that orders the harnesses: the longer the name, the higher.
ratio=$((40 + ${#name}))
cat >"$o" <<ROW
#!/bin/sh
sleep 2
echo "| stand-in ($name) | 4096x4096x4096 | $ratio.0 | cuBLAS SGEMM | 100.0 | $ratio.0% | matches |"
echo "| stand-in ($name) | 1024x1024x1024 | 1.0 | cuBLAS SGEMM | 100.0 | 1.0% | matches |"
echo "sizes=\${PRISM_BENCH_SIZES:-all}"
ROW
chmod +x "$o"
EOF
chmod +x "$work/bin/nvidia-smi" "$work/bin/nvcc"
start=$SECONDS
PATH="$work/bin:$PATH" PRISM_NVCC="$work/bin/nvcc" OUT="$work/out" \
    bench/gpu/session.sh all "$prism" 60 >"$work/log" 2>&1 || {
    cat "$work/log"
    echo "gpu-session: session.sh all failed" >&2
    exit 1
}
took=$((SECONDS - start))
out="$work/out"
fail() {
    cat "$work/log"
    for f in "$out"/*; do echo "== $f"; cat "$f"; done
    echo "gpu-session: $1" >&2
    exit 1
}
for f in compare probes bench sweep summary profile; do
    [ -s "$out/$f.txt" ] || fail "no $f.txt in \$OUT"
done
[ "$took" -le 75 ] || fail "a 60-second budget took $took s"
# The candidates in the agenda's order, at every size.
order="$(sed -n 's/^| stand-in (\([a-z0-9_]*\)) | 4096.*/\1/p' "$out/bench.txt" | paste -sd,)"
want="$(sed -n 's/^bench_list=//p' bench/gpu/session.sh)"
[ "$order" = "$want" ] || fail "bench ran $order, not the agenda's $want"
grep -q 'sizes=all' "$out/bench.txt" || fail "bench did not run every size"
grep -q 'sizes=targets' "$out/sweep.txt" || fail "the sweep did not run at the targets' sizes"
grep -q '^skipped `[a-z0-9_]*`: [0-9-]* s left before the deadline' "$out/sweep.txt" ||
    fail "no harness was skipped at the deadline"
grep -q '^profile skipped' "$out/profile.txt" || fail "the profile ran with too little time left"
# The probes ran on the simulator (the stand-in machine has no GPU: those runs fail, saying so).
grep -q '^float NaN bits .*: [0-9a-f]\{8\} ' "$out/probes.txt" || fail "no float NaN bits from the simulator"
grep -q '^half NaN bits .*: 00007fff ' "$out/probes.txt" || fail "no half NaN bits from the simulator"
grep -q '^marks = \[1, 0' "$out/probes.txt" || fail "no elected lanes from the simulator"
grep -q '^nan_bits on cuda: error' "$out/probes.txt" || fail "the GPU probe did not say why it failed"
# The summary: target sizes only, best ratio first.
grep -q '1024x1024x1024' "$out/summary.txt" && fail "the summary lists a size that is not a target"
ratios="$(cut -d'|' -f3 "$out/summary.txt" | tr -d ' %')"
[ -n "$ratios" ] && [ "$ratios" = "$(printf '%s\n' "$ratios" | sort -gr)" ] ||
    fail "the summary is not best ratio first"
# The profile's reducer of Nsight Compute's source page (bench/gpu/sass_stalls.py), which
# only a GPU run feeds: on a page of the shape ncu prints (a preamble row, quoted numbers
# with thousands separators, a line with no samples), the lines by samples and the sums by
# opcode, with the per-reason metrics' names shortened, and the FFMAs by register bank.
page='"Kernel Name","sgemm"
"Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)","smsp__pcsamp_warps_issue_stalled_dispatch_stall"
"0x100","FFMA R1, R2, R3, R1","1,200","80","60"
"0x110","@P0 LDS.128 R4, [R5]","300","20","1"
"0x120","FFMA R7, R2, R8, R7","0","0","0"'
reduced="$(printf '%s\n' "$page" | python3 bench/gpu/sass_stalls.py)" || fail "sass_stalls.py failed: $reduced"
grep -q '^  *0x100 *80.00% FFMA R1' <<<"$reduced" || fail "sass_stalls.py: no line 0x100 at 80%: $reduced"
grep -q '^  FFMA  *80.0% .*dispatch_stall 60' <<<"$reduced" || fail "sass_stalls.py: no FFMA sum: $reduced"
grep -q 'R7, R2, R8' <<<"$reduced" && fail "sass_stalls.py listed a line without samples"
# Both FFMAs read three registers from the file, two of them odd or even (R1, R3; R2, R8),
# none two apart by four: one class of two lines, 60 dispatch samples between them.
grep -q '^  3 uncached, a 2-bank / no 4-bank conflict  *2 lines  *1200 samples  *30.00 per line' <<<"$reduced" ||
    fail "sass_stalls.py: the FFMAs not classed by bank: $reduced"
echo "gpu-session: session.sh all ran its steps in $took s of a 60-second budget"
