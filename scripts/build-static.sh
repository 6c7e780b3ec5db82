#!/usr/bin/env bash
# Builds loopguard as a static-pie executable (glibc linked statically) into
# target/static/release/loopguard. The hook is a fresh process on every tool call; without the
# dynamic loader's work it starts about 0.3 ms sooner on these machines. loopguard calls no NSS
# functions (it reads HOME from the environment), so static glibc's NSS caveat does not apply.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo rustc --release -p loopguard --bin loopguard --target-dir target/static -- -C target-feature=+crt-static
echo "target/static/release/loopguard"
