#!/usr/bin/env bash
# What the default sandbox costs a real build: wall time of `cargo build` of this repository after
# cleaning this repository's own crates (loopguard-secrets, -core and loopguard recompile from
# scratch; the dependencies stay built — a touch alone left ~2 s of mostly fixed cost), plain versus run as the hook wraps it (`loopguard exec --profile workspace-write
# --net -- bash -c 'cargo build …'`), alternating. Prints the medians and their ratio (goal ≤ 1.05).
# usage: scripts/bench-sandbox-build.sh [RUNS]   (default 3; a separate target dir is used)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
cargo build --release -q -p loopguard
lg=$PWD/target/release/loopguard
tdir=$PWD/target/bench-sandbox-build
export CARGO_TARGET_DIR=$tdir
cargo build -q --workspace   # warm: dependencies built once, outside the measurement
measure() {
  cargo clean -q -p loopguard-secrets -p loopguard-core -p loopguard
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  t1=$(date +%s.%N)
  python3 -c "print($t1 - $t0)"
}
plain=() boxed=()
for _ in $(seq "$runs"); do
  plain+=("$(measure cargo build -q --workspace)")
  boxed+=("$(measure "$lg" exec --profile workspace-write --net -- bash -c 'cargo build -q --workspace')")
done
python3 - "${plain[*]}" "${boxed[*]}" <<'PY'
import statistics, sys
p = [float(x) for x in sys.argv[1].split()]
b = [float(x) for x in sys.argv[2].split()]
mp, mb = statistics.median(p), statistics.median(b)
print(f"sandbox_build: cargo build (the repository's own crates cleaned), {len(p)} runs each")
print(f"  plain      median {mp:7.2f} s   runs {', '.join(f'{x:.2f}' for x in p)}")
print(f"  sandboxed  median {mb:7.2f} s   runs {', '.join(f'{x:.2f}' for x in b)}")
print(f"    ratio = {mb / mp:.3f}  (goal ≤ 1.05)")
PY
