#!/usr/bin/env bash
# The project's test command. Installs what the tests need that cargo does not (the pinned
# Claude Code CLIs, from npm, into target/e2e-tools), checks the tools the end-to-end test uses,
# then runs every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."

# The pinned host CLIs (oldest supported and newest), from the one place that names them.
# shellcheck source=../tests/e2e/host-versions.env
. tests/e2e/host-versions.env
for version in "$CLAUDE_CODE_OLDEST" "$CLAUDE_CODE_NEWEST"; do
  tools=target/e2e-tools/claude-code-$version
  if ! "$tools/node_modules/.bin/claude" --version 2>/dev/null | grep -q "^$version"; then
    echo "installing @anthropic-ai/claude-code@$version into $tools" >&2
    mkdir -p "$tools"
    npm install --silent --no-audit --no-fund --prefix "$tools" "@anthropic-ai/claude-code@$version" >&2
  fi
done
for tool in unshare ip python3 timeout git; do
  command -v "$tool" >/dev/null || { echo "scripts/test.sh: '$tool' is required by the tests" >&2; exit 1; }
done
unshare -rn true || { echo "scripts/test.sh: unprivileged network namespaces (unshare -rn) are required" >&2; exit 1; }

cargo test --workspace "$@"
