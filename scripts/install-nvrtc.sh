#!/usr/bin/env bash
# Installs NVRTC (CUDA 13), with the CUDA headers it needs (cuda_fp16.h, cuda_bf16.h,
# cooperative_groups.h and CCCL), from NVIDIA's PyPI wheels into
# ${PRISM_CACHE:-$HOME/.cache/prism}/nvrtc when they are not there yet, and prints the path of
# libnvrtc on stdout. Idempotent: when the library and headers are there, it only prints the
# path. prism_gpu looks in this cache by itself (src/nvrtc.rs); PRISM_NVRTC can point
# elsewhere. No GPU and no nvcc are needed: `prism run --device cuda` compiles in-process
# with NVRTC when nvcc is absent. About 175 MB, a few seconds.
set -euo pipefail
cache="${PRISM_CACHE:-$HOME/.cache/prism}"
dir="$cache/nvrtc"
lib="$dir/nvidia/cu13/lib/libnvrtc.so.13"
ready() {
    [ -f "$1/nvidia/cu13/lib/libnvrtc.so.13" ] && [ -f "$1/nvidia/cu13/include/cuda_fp16.h" ] &&
        [ -f "$1/nvidia/cu13/include/cooperative_groups.h" ] && [ -d "$1/nvidia/cu13/include/cccl/cuda" ]
}
if ready "$dir"; then
    echo "$lib"
    exit 0
fi
mkdir -p "$cache"
# Install into a fresh directory and move it into place only once it is complete, so an
# interrupted install never leaves a half-filled cache behind.
tmp="$(mktemp -d "$cache/nvrtc.tmp.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
echo "installing NVRTC from PyPI into $dir ..." >&2
python3 -m pip install --quiet --disable-pip-version-check --no-warn-script-location --target "$tmp" \
    "nvidia-cuda-nvrtc>=13,<14" "nvidia-cuda-runtime>=13,<14" "nvidia-cuda-cccl>=13,<14" >&2
ready "$tmp" || { echo "the NVRTC wheels did not have the expected layout under $tmp/nvidia/cu13" >&2; exit 1; }
rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT
echo "$lib"
