#!/usr/bin/env bash
# Runs every benchmark and prints its figures. Benchmarks are never part of the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /usr/bin/time ] || { apt-get update -qq && apt-get install -y -qq time; } || true
cargo bench -p loopguard-core --bench gate
cargo bench -p loopguard-core --bench shell
cargo bench -p loopguard --bench audit_append
cargo bench -p loopguard --bench hook_latency
