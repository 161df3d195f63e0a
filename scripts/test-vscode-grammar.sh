#!/usr/bin/env bash
# Tests the VS Code extension (editors/vscode): installs its locked npm dependencies, checks
# that the client script parses, and runs the TextMate grammar over snippets and over every
# `.prism` file of the repository (editors/vscode/test/grammar.test.js). Node.js and npm are
# required: without them this fails, so CI cannot skip the test silently.
set -euo pipefail
cd "$(dirname "$0")/../editors/vscode"
for tool in node npm; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "error: \`$tool\` is not installed; the VS Code grammar test needs Node.js and npm" >&2
        exit 1
    fi
done
# `npm ci` installs exactly package-lock.json's versions, from scratch.
npm ci --no-audit --no-fund --loglevel=error
npm test
