#!/usr/bin/env bash
# Runs the real Claude Code CLI against mock_anthropic.py, inside the current network namespace
# (the caller runs this under `unshare -rn`, so only loopback exists). Nothing leaves the machine.
#
# usage: run-claude.sh CLAUDE_BIN SCRIPT.json WORKDIR SETTINGS.json OUTDIR [EXTRA CLAUDE ARGS…]
# Leaves OUTDIR/requests.jsonl (every API request), OUTDIR/claude.out, OUTDIR/claude.err.
set -euo pipefail
claude_bin=$1 script=$2 workdir=$3 settings=$4 outdir=$5
shift 5
here=$(cd "$(dirname "$0")" && pwd)

ip link set lo up
python3 "$here/mock_anthropic.py" "$script" "$outdir/requests.jsonl" "$outdir/port" &
mock=$!
trap 'kill $mock 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do [ -s "$outdir/port" ] && break; sleep 0.05; done
port=$(cat "$outdir/port")

cd "$workdir"
export ANTHROPIC_BASE_URL="http://127.0.0.1:$port"
export ANTHROPIC_API_KEY="sk-ant-e2e-dummy"
export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1
export IS_SANDBOX=1
timeout 120 "$claude_bin" -p "go" --output-format stream-json --verbose \
  --settings "$settings" --permission-mode bypassPermissions "$@" \
  >"$outdir/claude.out" 2>"$outdir/claude.err" || echo "claude exited $?" >>"$outdir/claude.err"
