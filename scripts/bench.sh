#!/usr/bin/env bash
# Runs every benchmark and prints its figures. Benchmarks are never part of the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /usr/bin/time ] || { apt-get update -qq && apt-get install -y -qq time; } || true
cargo bench -p loopguard-core --bench gate
cargo bench -p loopguard-core --bench shell
cargo bench -p loopguard --bench audit_append
cargo bench -p loopguard --bench breaker
cargo bench -p loopguard --bench exec_overhead
bash scripts/bench-sandbox-build.sh
cargo bench -p loopguard --bench preview
cargo bench -p loopguard --bench hook_latency
# The same against the static build users get from scripts/install.sh.
static_bin=$(bash scripts/build-static.sh | tail -n 1)
LOOPGUARD_BENCH_BIN="$PWD/$static_bin" cargo bench -p loopguard --bench hook_latency
cargo bench -p loopguard-core --bench paths
cargo bench -p loopguard-core --bench advisories
cargo bench -p loopguard-secrets --bench scan
