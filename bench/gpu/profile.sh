#!/usr/bin/env bash
# Profiles one launch of a Prism kernel inside a GPU harness with Nsight Compute (on the GPU
# machine): builds the harness as bench/gpu/run.sh does, then runs it under `ncu` with the
# sections that say where a kernel's time goes (speed of light, memory, warp stalls,
# occupancy, launch shape). `--clock-control none` leaves the clocks as the benchmarks see
# them. The harness runs every size with REPS timed runs; LAUNCH_SKIP picks which launch of
# the kernel is profiled (a harness runs its sizes in increasing order, each 3 + REPS times).
#
# With STALLS=1 it also prints why warps did not issue, reason by reason (the sections above
# give only the average cycles between issues; the 2026-11-28 profiles of the sgemms lacked
# the reasons): the WarpStateStats section's details, its per-reason metrics, the
# SourceCounters section, and the SASS lines the sampled stalls sit on, with their reasons
# (sass_stalls.py; the 2026-11-28 second run found the FP32 gemms' extra stalls are dispatch
# stalls, on lines not yet known), and the dispatch stalls per FFMA by whether its sources
# that the reuse cache does not serve share a register bank (2- and 4-bank models).
#
# usage: [STALLS=1] bench/gpu/profile.sh PRISM_BINARY HARNESS KERNEL_REGEX [LAUNCH_SKIP] [REPS]
#   e.g. bench/gpu/profile.sh target/release/prism scan 'scan' 10 1
set -euo pipefail
cd "$(dirname "$0")/../.."
prism="$1" harness="$2" kernel="$3" skip="${4:-0}" reps="${5:-1}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
ONLY="$harness" BUILD_DIR="$dir" bench/gpu/run.sh --build-only "$prism" >/dev/null
sections=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats
    --section Occupancy --section LaunchStats --section SchedulerStats --section ComputeWorkloadAnalysis)
if [ "${STALLS:-0}" != 1 ]; then
    ncu --clock-control none --kernel-name "regex:$kernel" --launch-skip "$skip" --launch-count 1 \
        "${sections[@]}" "$dir/$harness" "$reps"
    exit
fi
# With the stalls, the report is saved, then printed twice: the sections with every detail,
# and the source page, SASS line by SASS line, reduced by sass_stalls.py to the lines that
# drew samples and the samples summed by opcode (the whole page of a gemm is thousands of
# lines). Should this Nsight Compute not print a source page, the sections still stand.
ncu --clock-control none --kernel-name "regex:$kernel" --launch-skip "$skip" --launch-count 1 \
    "${sections[@]}" --section SourceCounters \
    --metrics 'regex:^smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$' \
    -o "$dir/report" "$dir/$harness" "$reps"
ncu -i "$dir/report.ncu-rep" --print-details all
echo "== SASS lines of \`$kernel\` by sampled stalls"
if ncu -i "$dir/report.ncu-rep" --page source --csv --print-source sass >"$dir/source.csv" 2>"$dir/source.err"; then
    python3 bench/gpu/sass_stalls.py <"$dir/source.csv" || true
else
    echo "no source page: $(head -c 400 "$dir/source.err")"
fi
