#!/usr/bin/env bash
# Builds the Prism Python package (crates/prism_py) into one abi3 wheel for CPython 3.9 and
# later, with maturin, and prints the wheel's path on stdout (progress goes to stderr).
#
# maturin comes from PyPI into a venv under target/ (made once, reused), and builds with
# cargo into the workspace's target/ like every other crate, so a CI run that has built
# the workspace recompiles only the extension itself. Needs python3 (3.9 or later) with
# venv, and PyPI the first time.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
venv="$root/target/maturin-venv"
if ! "$venv/bin/maturin" --version >/dev/null 2>&1; then
    echo "installing maturin from PyPI into $venv ..." >&2
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "maturin>=1.5,<2" >&2
fi
out="$root/target/wheels"
rm -f "$out"/prism_lang-*.whl
cd crates/prism_py
# --release: the workspace's release profile (overflow checks on, as in every release build);
# --strip drops its debug info from the extension.
"$venv/bin/maturin" build --release --strip --out "$out" --interpreter python3 >&2
wheel="$(ls "$out"/prism_lang-*.whl)"
echo "$wheel"
