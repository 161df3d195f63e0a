#!/usr/bin/env bash
# Clones the repository (its committed HEAD) into an empty temporary directory, so that
# nothing the project does not hold lies beside it, and runs the README's two commands
# there: the first kernel run on the simulator, and the test command. Dependencies are
# reused from this checkout's target directory (the clone's own crates are rebuilt).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
git clone --quiet --no-local "$repo" "$tmp/prism"
cd "$tmp/prism"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target/fresh-clone}"
# The README's commands, taken from its first code block so they cannot drift apart: each
# line that is not a comment, continuation lines joined, trailing comments dropped.
mapfile -t cmds < <(awk '/^```sh/{f=1;next} /^```/{if(f)exit} f' README.md \
    | grep -v '^ *#' | sed -e ':a' -e '/\\$/N; s/\\\n//; ta' | sed 's/ \+# .*$//')
[ "${#cmds[@]}" -ge 2 ] || { echo "README.md's first code block must hold the two commands" >&2; exit 1; }
for cmd in "${cmds[@]}"; do
    echo "+ $cmd"
    bash -c "$cmd"
done
