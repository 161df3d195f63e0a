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
# the reasons): the WarpStateStats section's details, its per-reason metrics, and the
# SourceCounters section (the SASS lines the sampled stalls sit on; the 2026-11-28 second
# run found the FP32 gemms' extra stalls are dispatch stalls, on lines not yet known).
#
# usage: [STALLS=1] bench/gpu/profile.sh PRISM_BINARY HARNESS KERNEL_REGEX [LAUNCH_SKIP] [REPS]
#   e.g. bench/gpu/profile.sh target/release/prism scan 'scan' 10 1
set -euo pipefail
cd "$(dirname "$0")/../.."
prism="$1" harness="$2" kernel="$3" skip="${4:-0}" reps="${5:-1}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
ONLY="$harness" BUILD_DIR="$dir" bench/gpu/run.sh --build-only "$prism" >/dev/null
stalls=()
if [ "${STALLS:-0}" = 1 ]; then
    stalls=(--print-details all --section SourceCounters
        --metrics 'regex:^smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$')
fi
ncu --clock-control none --kernel-name "regex:$kernel" --launch-skip "$skip" --launch-count 1 "${stalls[@]}" \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
    --section Occupancy --section LaunchStats --section SchedulerStats --section ComputeWorkloadAnalysis \
    "$dir/$harness" "$reps"
