#!/usr/bin/env bash
# Builds the static loopguard and installs it as ~/.cargo/bin/loopguard (or $1), with
# loopguard-console (dashboard, fleet) next to it.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(bash scripts/build-static.sh | tail -n 1)
dest=${1:-"${CARGO_HOME:-$HOME/.cargo}/bin/loopguard"}
mkdir -p "$(dirname "$dest")"
install -m 755 "$bin" "$dest"
install -m 755 "$(dirname "$bin")/loopguard-console" "$(dirname "$dest")/loopguard-console"
echo "installed $dest and $(dirname "$dest")/loopguard-console"
