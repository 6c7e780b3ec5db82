#!/usr/bin/env bash
# What ships is what is tested: builds loopguard the two ways the README tells users to install
# it — `cargo install --locked --path crates/loopguard` and the static build of
# scripts/install.sh — and holds each binary to what the test build is held to:
#   - `loopguard selftest` (every pattern, pack and secret rule as that binary was built, and a
#     fixed set of decisions through its hook handler), in a throwaway HOME and state home;
#   - the decision corpora (the shell fixture tables with their false-positive and red-team
#     rounds, the calls table, dcg's corpus with its figures) decided by that binary through
#     `loopguard decide` (LOOPGUARD_DECIDE_BIN), against the same expectations as the tests.
# A built-in pattern that does not compile in the installed binary fails here, never silently
# in production. Usage: scripts/check-installed.sh [ROOT] (default: a temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."
root=${1:-$(mktemp -d)}
mkdir -p "$root"
t0=$SECONDS

# The README's `cargo install`, into ROOT/bin; the build shares target/ (target/release).
cargo install --locked --quiet --path crates/loopguard --root "$root" --target-dir target
echo "check-installed: cargo install built $root/bin/loopguard ($((SECONDS - t0)) s)"
t1=$SECONDS
bash scripts/install.sh "$root/static/loopguard" >/dev/null
echo "check-installed: the static build installed $root/static/loopguard ($((SECONDS - t1)) s)"

for bin in "$root/bin/loopguard" "$root/static/loopguard"; do
  scratch=$(mktemp -d)
  mkdir -p "$scratch/home/project"
  (
    cd "$scratch/home/project"
    git init -q
    env -i PATH="$PATH" HOME="$scratch/home" LOOPGUARD_HOME="$scratch/state" "$bin" selftest
  ) || { echo "check-installed: $bin selftest failed" >&2; exit 1; }
  rm -rf "$scratch"
  # pipefail: the pipeline fails when cargo does (grep only keeps the figures readable).
  LOOPGUARD_DECIDE_BIN="$bin" cargo test --quiet -p loopguard-core \
    --test gate_cases --test gate_calls --test dcg_corpus -- --nocapture 2>&1 \
    | grep -E "^(deciding through|block rows|test result)|panicked|FAILED|failures|want " \
    || { echo "check-installed: the corpora through $bin failed" >&2; exit 1; }
done
echo "check-installed: both installed binaries pass selftest and decide every corpus as the tests do ($((SECONDS - t0)) s)"
