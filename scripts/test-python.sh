#!/usr/bin/env bash
# The Python package's tests: builds the wheel (scripts/build-wheel.sh), installs it into a
# fresh venv with NumPy and pytest from PyPI, and runs tests/python/ there, from outside the
# source tree's package so that only the installed wheel is imported. Called from .ci/run;
# fails (never skips) when python3, venv, PyPI or anything the suite needs is missing.
#
# PRISM_PYTHON picks the interpreter (default python3; 3.10 or later, since the decorated
# kernels in the suite use `match`). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
python="${PRISM_PYTHON:-python3}"
start=$SECONDS
wheel="$(scripts/build-wheel.sh)"
echo "built $(basename "$wheel") in $((SECONDS - start)) s" >&2
venv="$root/target/python-test-venv"
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel" "numpy>=1.21" "pytest>=7"
# From a directory outside the source tree, so `import prism` finds the installed package.
cd "$root/target"
"$venv/bin/python" -m pytest -q -p no:cacheprovider "$root/tests/python" "$@"
echo "python tests done in $((SECONDS - start)) s" >&2
