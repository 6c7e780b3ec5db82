#!/usr/bin/env bash
# The project's test command. Installs what the tests need that cargo does not (the pinned
# host CLIs — Claude Code, Codex, Gemini CLI, Copilot CLI — from npm, into target/e2e-tools), checks the tools the end-to-end test uses,
# then runs every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."

# System packages the tests need (Debian's): unshare and ip for the loopback-only namespaces of
# the end-to-end tests, strace for the differential test, Chromium and ChromeDriver for the
# dashboard's browser tests, PostgreSQL for the fleet tests, and Debian's package lists (Go is
# unpacked from them below). Installed here when missing, so this one command sets up a fresh
# machine; where it cannot (not root, or no apt-get) it names the command to run and stops.
need=()
command -v unshare >/dev/null || need+=(util-linux)
command -v ip >/dev/null || need+=(iproute2)
command -v strace >/dev/null || need+=(strace)
command -v chromium >/dev/null || need+=(chromium)
command -v chromedriver >/dev/null || need+=(chromium-driver)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
# The package lists matter only while Go is still to be unpacked from them (below).
lists_missing() {
  [ ! -x target/e2e-tools/go/usr/lib/go-1.19/bin/go ] && ! ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1
}
if [ "${#need[@]}" -gt 0 ] || lists_missing; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "scripts/test.sh: installing ${need[*]:-the package lists}" >&2
    apt-get update -qq
    if [ "${#need[@]}" -gt 0 ]; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >&2
    fi
  else
    echo "scripts/test.sh: the tests need Debian packages that are not installed: ${need[*]:-(package lists)}" >&2
    echo "run as root first: apt-get update && apt-get install -y ${need[*]:-}" >&2
    exit 1
  fi
fi

# The pinned host CLIs (oldest supported and newest), from the one place that names them.
# shellcheck source=../tests/e2e/host-versions.env
. tests/e2e/host-versions.env
# Each as <dir prefix> <npm package> <binary> <version>; a version already installed is kept.
install_cli() {
  local tools=target/e2e-tools/$1-$4
  if ! "$tools/node_modules/.bin/$3" --version 2>/dev/null | grep -q "$4"; then
    echo "installing $2@$4 into $tools" >&2
    mkdir -p "$tools"
    npm install --silent --no-audit --no-fund --prefix "$tools" "$2@$4" >&2
  fi
}
for version in "$CLAUDE_CODE_OLDEST" "$CLAUDE_CODE_NEWEST"; do
  install_cli claude-code @anthropic-ai/claude-code claude "$version"
done
for version in $(printf '%s\n' "$CODEX_OLDEST" "$CODEX_NEWEST" | sort -u); do
  install_cli codex @openai/codex codex "$version"
done
for version in $(printf '%s\n' "$GEMINI_CLI_OLDEST" "$GEMINI_CLI_NEWEST" | sort -u); do
  install_cli gemini-cli @google/gemini-cli gemini "$version"
done
for version in $(printf '%s\n' "$COPILOT_OLDEST" "$COPILOT_NEWEST" | sort -u); do
  install_cli copilot @github/copilot copilot "$version"
  # Copilot unpacks itself into its cache on first run; do it once here, not racing in the
  # parallel end-to-end tests (they share this cache: crates/loopguard/tests/e2e_hosts.rs).
  scratch=$(mktemp -d)
  HOME=$scratch XDG_CACHE_HOME=$PWD/target/e2e-tools/xdg-cache \
    "target/e2e-tools/copilot-$version/node_modules/.bin/copilot" --version >/dev/null
  rm -rf "$scratch"
done
# Build tools the sandbox tests build with (crates/loopguard/tests/sandbox_builds.rs): pytest from
# PyPI and Go from Debian's packages, both unpacked into target/e2e-tools (no root needed).
if ! PYTHONPATH=target/e2e-tools/py python3 -m pytest --version >/dev/null 2>&1; then
  echo "installing pytest into target/e2e-tools/py" >&2
  python3 -m pip install --quiet --disable-pip-version-check --target target/e2e-tools/py pytest >&2
fi
if ! target/e2e-tools/go/usr/lib/go-1.19/bin/go version >/dev/null 2>&1; then
  echo "unpacking Go 1.19 (Debian golang-1.19-go, golang-1.19-src) into target/e2e-tools/go" >&2
  mkdir -p target/e2e-tools/go-debs target/e2e-tools/go
  (cd target/e2e-tools/go-debs && apt-get download golang-1.19-go golang-1.19-src >&2) \
    || { echo "scripts/test.sh: cannot download Go from Debian (run apt-get update first)" >&2; exit 1; }
  for deb in target/e2e-tools/go-debs/*.deb; do dpkg -x "$deb" target/e2e-tools/go; done
fi
for tool in unshare ip python3 timeout git; do
  command -v "$tool" >/dev/null || { echo "scripts/test.sh: '$tool' is required by the tests" >&2; exit 1; }
done
for tool in chromium chromedriver; do
  command -v "$tool" >/dev/null || {
    echo "scripts/test.sh: '$tool' is required by the dashboard's browser test (apt-get install chromium chromium-driver)" >&2
    exit 1
  }
done
unshare -rn true || { echo "scripts/test.sh: unprivileged network namespaces (unshare -rn) are required" >&2; exit 1; }

# PostgreSQL for the fleet tests (crates/loopguard/tests/fleet.rs): a private, throwaway
# cluster under target/, reachable only on a Unix socket there, stopped when this script ends.
# initdb refuses to run as root: as root (CI), the cluster runs as Debian's `postgres` user.
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$pgbin" ] && [ -x "$pgbin/initdb" ] || {
  echo "scripts/test.sh: PostgreSQL is required by the fleet tests (apt-get install postgresql)" >&2
  exit 1
}
pgdir=$PWD/target/e2e-tools/pg
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
rm -rf "$pgdir" && mkdir -p "$pgdir"
[ "$(id -u)" = 0 ] && chown postgres "$pgdir"
as_pg "$pgbin/initdb" -D "$pgdir/data" -U postgres -A trust >/dev/null
as_pg "$pgbin/pg_ctl" -D "$pgdir/data" -l "$pgdir/log" -w \
  -o "-c listen_addresses='' -k $pgdir -c max_connections=300 -c fsync=off" start >/dev/null
export LOOPGUARD_TEST_PG="host=$pgdir user=postgres"
# A test that kills PostgreSQL mid-run starts a cluster of its own with these binaries.
export LOOPGUARD_TEST_PGBIN="$pgbin"

# The module graph stays acyclic and no new function grows past 80 lines (scripts/structure.py).
python3 scripts/structure.py cycles
python3 scripts/structure.py fn-lengths --allow scripts/long-functions.txt >/dev/null \
  || { python3 scripts/structure.py fn-lengths --allow scripts/long-functions.txt; exit 1; }

# Every insta snapshot file must be one a test still asserts against (what `cargo insta test
# --unreferenced=reject` checks): insta lists each snapshot it reads into this file.
refs=$(mktemp)
trap 'rm -f "$refs"; as_pg "$pgbin/pg_ctl" -D "$pgdir/data" -m immediate stop >/dev/null 2>&1 || true' EXIT
INSTA_SNAPSHOT_REFERENCES_FILE="$refs" cargo test --workspace "$@"
if [ "$#" -eq 0 ]; then
  unreferenced=$(find crates -path '*/snapshots/*.snap' -print | while read -r f; do
    grep -qxF "$PWD/$f" "$refs" || echo "$f"
  done)
  if [ -n "$unreferenced" ]; then
    echo "scripts/test.sh: snapshot files no test references (delete them or restore their test):" >&2
    echo "$unreferenced" >&2
    exit 1
  fi
fi
