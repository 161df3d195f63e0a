#!/usr/bin/env bash
# Installs nvcc (CUDA 13), with cuobjdump and nvdisasm for the SASS gate, from NVIDIA's PyPI
# wheels into ${PRISM_CACHE:-$HOME/.cache/prism}/nvcc when they are not there yet, and prints
# the path of nvcc on stdout. Idempotent: when nvcc is
# already installed and runs, it only prints the path. No GPU is needed to compile CUDA.
# NVIDIA publishes nvcc as PyPI wheels; the unsuffixed (CUDA 13) packages ship nvcc itself,
# the -cu12 ones only ptxas. nvcc, the runtime headers and CCCL are all a compile needs.
set -euo pipefail
cache="${PRISM_CACHE:-$HOME/.cache/prism}"
dir="$cache/nvcc"
nvcc="$dir/nvidia/cu13/bin/nvcc"
if [ -x "$nvcc" ] && "$nvcc" --version >/dev/null 2>&1 && [ -x "$dir/nvidia/cu13/bin/cuobjdump" ]; then
    echo "$nvcc"
    exit 0
fi
mkdir -p "$cache"
# Install into a fresh directory and move it into place only once it works, so an
# interrupted install never leaves a half-filled cache behind.
tmp="$(mktemp -d "$cache/nvcc.tmp.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
echo "installing nvcc from PyPI into $dir ..." >&2
python3 -m pip install --quiet --disable-pip-version-check --no-warn-script-location --target "$tmp" \
    "nvidia-cuda-nvcc>=13,<14" "nvidia-cuda-cccl>=13,<14" "nvidia-cuda-runtime>=13,<14" \
    "nvidia-cuda-cuobjdump>=13,<14" "nvidia-cuda-nvdisasm>=13,<14" >&2
"$tmp/nvidia/cu13/bin/nvcc" --version >/dev/null
"$tmp/nvidia/cu13/bin/cuobjdump" --version >/dev/null
rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT
echo "$nvcc"
