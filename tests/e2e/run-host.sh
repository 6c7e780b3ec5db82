#!/usr/bin/env bash
# Runs a real host CLI (codex, gemini or copilot) against mock_models.py, inside the current
# network namespace (the caller runs this under `unshare -rn`, so only loopback exists). Nothing
# leaves the machine. HOME (and the host's own home under it) is the caller's sandbox: loopguard's
# hooks were installed there by `loopguard install <host>`.
#
# usage: run-host.sh HOST CLI_BIN SCRIPT.json WORKDIR OUTDIR
# Leaves OUTDIR/requests.jsonl (every API request), OUTDIR/host.out, OUTDIR/host.err.
set -euo pipefail
host=$1 bin=$2 script=$3 workdir=$4 outdir=$5
here=$(cd "$(dirname "$0")" && pwd)

ip link set lo up
python3 "$here/mock_models.py" "$script" "$outdir/requests.jsonl" "$outdir/port" &
mock=$!
trap 'kill $mock 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do [ -s "$outdir/port" ] && break; sleep 0.05; done
port=$(cat "$outdir/port")

cd "$workdir"
case "$host" in
  codex)
    # The provider points at the mock; everything that would phone home is off. Top-level keys go
    # first (TOML), the tables after what `loopguard install codex` wrote.
    config="$CODEX_HOME/config.toml"
    { printf 'model = "gpt-5.5"\nmodel_provider = "mock"\ncheck_for_update_on_startup = false\n\n'
      cat "$config"; } >"$config.new"
    mv "$config.new" "$config"
    cat >>"$config" <<TOML

[analytics]
enabled = false

[feedback]
enabled = false

[features]
plugins = false

[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:$port/v1"
wire_api = "responses"
env_key = "MOCK_API_KEY"
request_max_retries = 0
stream_max_retries = 0
TOML
    # No --dangerously-bypass-hook-trust: the hooks run because `loopguard install codex`
    # recorded their trust.
    MOCK_API_KEY=dummy timeout 120 "$bin" exec --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox \
      --color never --json "go" </dev/null >"$outdir/host.out" 2>"$outdir/host.err" \
      || echo "codex exited $?" >>"$outdir/host.err"
    ;;
  gemini)
    GEMINI_API_KEY=dummy GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$port" GEMINI_CLI_TRUST_WORKSPACE=true \
      GEMINI_TELEMETRY_ENABLED=false timeout 120 "$bin" -p "go" -m gemini-2.5-flash --approval-mode yolo \
      -o stream-json </dev/null >"$outdir/host.out" 2>"$outdir/host.err" \
      || echo "gemini exited $?" >>"$outdir/host.err"
    ;;
  copilot)
    COPILOT_OFFLINE=true COPILOT_PROVIDER_BASE_URL="http://127.0.0.1:$port/v1" COPILOT_PROVIDER_TYPE=openai \
      COPILOT_PROVIDER_API_KEY=dummy COPILOT_MODEL=gpt-4.1 timeout 120 "$bin" -p "go" --allow-all-tools \
      --no-color --log-dir "$outdir/logs" --output-format json </dev/null >"$outdir/host.out" 2>"$outdir/host.err" \
      || echo "copilot exited $?" >>"$outdir/host.err"
    ;;
  *) echo "unknown host $host" >&2; exit 2 ;;
esac
