#!/usr/bin/env bash
# Captures the hook events a real host CLI (codex, gemini or copilot) sends in one scripted
# session — shell calls (one failing), file tools where the mock can drive them, session
# start/end, prompt, stop — into crates/loopguard/tests/fixtures/hosts/<host>/, named
# v<version>_<event>[_<tool>].json, with paths rewritten to /home/dev/... Offline: the CLI talks
# to tests/e2e/mock_models.py inside a loopback-only namespace (tests/e2e/run-host.sh).
#
# The hooks are installed by `loopguard install <host>` (so Codex trusts them), then the installed
# binary is replaced by a script that saves its stdin and answers nothing: the host's trust
# record and configuration stay exactly as install wrote them.
#
# usage: scripts/capture-host-samples.sh HOST [VERSION]   (default: the pinned newest)
# Needs a built loopguard (target/debug/loopguard: `cargo build`).
set -euo pipefail
cd "$(dirname "$0")/.."
. tests/e2e/host-versions.env
host=$1
case "$host" in
  codex) dir=codex bin=codex version=${2:-$CODEX_NEWEST} ;;
  gemini) dir=gemini-cli bin=gemini version=${2:-$GEMINI_CLI_NEWEST} ;;
  copilot) dir=copilot bin=copilot version=${2:-$COPILOT_NEWEST} ;;
  *) echo "usage: $0 codex|gemini|copilot [VERSION]" >&2; exit 2 ;;
esac
cli=$PWD/target/e2e-tools/$dir-$version/node_modules/.bin/$bin
[ -x "$cli" ] || { echo "no $host $version at $cli; run scripts/test.sh" >&2; exit 1; }
[ -x target/debug/loopguard ] || { echo "build loopguard first (cargo build)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ws" "$work/home/.codex" "$work/bin" "$work/events" "$work/out"
git -C "$work/ws" init -q
printf 'line one\nline two\n' >"$work/ws/notes.txt"
export HOME=$work/home CODEX_HOME=$work/home/.codex COPILOT_HOME=$work/home/.copilot
export XDG_CACHE_HOME=$PWD/target/e2e-tools/xdg-cache LOOPGUARD_HOME=$work/state
if [ "$host" = gemini ]; then
  mkdir -p "$work/home/.gemini"
  echo '{"security":{"auth":{"selectedType":"gemini-api-key"}},"general":{"enableAutoUpdate":false,"enableAutoUpdateNotification":false},"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false}}' \
    >"$work/home/.gemini/settings.json"
fi
cp target/debug/loopguard "$work/bin/loopguard"
(cd "$work/ws" && "$work/bin/loopguard" install "$host" >/dev/null)
cat >"$work/bin/loopguard" <<HOOK
#!/bin/sh
cat > "$work/events/\$(date +%s%N).json"
HOOK
chmod +x "$work/bin/loopguard"
python3 - "$host" "$work" >"$work/script.json" <<'PY'
import json, sys
host, w = sys.argv[1], sys.argv[2]
ws = f"{w}/ws"
steps = {
    "codex": [
        {"tool": "exec_command", "input": {"cmd": "echo safe > safe.txt"}},
        {"tool": "exec_command", "input": {"cmd": "false"}},
    ],
    "gemini": [
        {"tool": "run_shell_command", "input": {"command": "echo safe > safe.txt", "description": "safe"}},
        {"tool": "write_file", "input": {"file_path": f"{ws}/new.txt", "content": "brand new\n"}},
        {"tool": "replace", "input": {"file_path": f"{ws}/notes.txt", "instruction": "two to 2",
                                      "old_string": "line two", "new_string": "line 2"}},
        {"tool": "read_file", "input": {"file_path": f"{ws}/notes.txt"}},
        {"tool": "run_shell_command", "input": {"command": "false", "description": "fails"}},
    ],
    "copilot": [
        {"tool": "bash", "input": {"command": "echo safe > safe.txt", "description": "safe"}},
        {"tool": "create", "input": {"path": f"{ws}/new.txt", "file_text": "brand new\n"}},
        {"tool": "edit", "input": {"path": f"{ws}/notes.txt", "old_str": "line two", "new_str": "line 2"}},
        {"tool": "view", "input": {"path": f"{ws}/notes.txt"}},
        {"tool": "view", "input": {"path": f"{ws}/missing.txt"}},
    ],
}[host]
print(json.dumps(steps + [{"text": "finished"}]))
PY
unshare -rn bash tests/e2e/run-host.sh "$host" "$cli" "$work/script.json" "$work/ws" "$work/out" || true
dest=crates/loopguard/tests/fixtures/hosts/$host
python3 - "$work" "$dest" "$version" <<'PY'
import json, os, sys
w, dest, version = sys.argv[1], sys.argv[2], sys.argv[3]
seen = {}
for name in sorted(os.listdir(f"{w}/events")):
    text = open(f"{w}/events/{name}").read()
    text = text.replace(f"{w}/ws", "/home/dev/project").replace(f"{w}/home", "/home/dev").replace(w, "/home/dev/run")
    ev = json.loads(text)
    key = "_".join(x for x in [ev.get("hook_event_name", "event"), ev.get("tool_name", "")] if x)
    n = seen.get(key, 0)
    seen[key] = n + 1
    out = f"{dest}/v{version}_{key}{'_' + str(n + 1) if n else ''}.json"
    open(out, "w").write(json.dumps(ev, indent=2) + "\n")
    print(out)
PY
