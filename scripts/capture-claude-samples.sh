#!/usr/bin/env bash
# Captures the hook events a Claude Code CLI sends in one scripted session (Bash, Read, Edit,
# Write, a failing Bash, session start/end, prompt, stop) into
# crates/loopguard/tests/fixtures/claude-code/<version>/, with paths rewritten to /home/dev/...,
# plus the session's message lines into crates/loopguard-core/tests/fixtures/transcript-<version>.jsonl.
# Offline: the CLI talks to tests/e2e/mock_anthropic.py inside a loopback-only namespace.
#
# usage: scripts/capture-claude-samples.sh [VERSION]   (default: CLAUDE_CODE_NEWEST)
set -euo pipefail
cd "$(dirname "$0")/.."
. tests/e2e/host-versions.env
version=${1:-$CLAUDE_CODE_NEWEST}
claude=$PWD/target/e2e-tools/claude-code-$version/node_modules/.bin/claude
[ -x "$claude" ] || { echo "no Claude Code $version at $claude; run scripts/test.sh or npm install it there" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ws" "$work/home" "$work/events" "$work/out"
cat >"$work/capture.sh" <<HOOK
#!/bin/sh
cat > "$work/events/\$(date +%s%N).json"
HOOK
chmod +x "$work/capture.sh"
git -C "$work/ws" init -q
python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
entry = {"type": "command", "command": f"{w}/capture.sh", "timeout": 10}
events = ["PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionStart", "SessionEnd", "Stop", "UserPromptSubmit"]
hooks = {e: [{"matcher": "*", "hooks": [entry]}] if e.startswith(("Pre", "Post")) else [{"hooks": [entry]}] for e in events}
json.dump({"hooks": hooks}, open(f"{w}/settings.json", "w"))
json.dump([
    {"tool": "Bash", "input": {"command": "echo safe > safe.txt", "description": "safe"}},
    {"tool": "Read", "input": {"file_path": f"{w}/ws/safe.txt"}},
    {"tool": "Edit", "input": {"file_path": f"{w}/ws/safe.txt", "old_string": "safe", "new_string": "sound"}},
    {"tool": "Write", "input": {"file_path": f"{w}/ws/w.txt", "content": "w\n"}},
    {"tool": "Bash", "input": {"command": "false", "description": "fails"}},
    {"text": "finished"},
], open(f"{w}/script.json", "w"))
PY
env -i PATH="$PATH" HOME="$work/home" unshare -rn bash tests/e2e/run-claude.sh \
  "$claude" "$work/script.json" "$work/ws" "$work/settings.json" "$work/out"
python3 - "$work" "$version" <<'PY'
import glob, json, os, re, sys
w, version = sys.argv[1], sys.argv[2]
def local(t):
    dashed = re.sub("[^A-Za-z0-9]", "-", w)  # how Claude Code names a project's folder
    return (t.replace(f"{w}/ws", "/home/dev/project").replace(f"{dashed}-ws", "-home-dev-project")
             .replace(f"{w}/home", "/home/dev").replace(f"{w}/capture.sh", "/home/dev/bin/capture-hook"))
out = f"crates/loopguard/tests/fixtures/claude-code/{version}/"
os.makedirs(out, exist_ok=True)
seen = {}
for f in sorted(glob.glob(f"{w}/events/*.json")):
    d = json.loads(local(open(f).read()))
    name = d["hook_event_name"] if not d.get("tool_name") else f"{d['tool_name']}_{d['hook_event_name']}"
    seen[name] = seen.get(name, 0) + 1
    if seen[name] > 1:
        name = f"{name}_{seen[name]}"
    open(f"{out}{name}.json", "w").write(json.dumps(d, indent=2) + "\n")
# Message lines only (the transcript also holds request blobs with the whole system prompt).
keep = ("assistant", "user", "queue-operation", "last-prompt", "system")
lines = []
for t in glob.glob(f"{w}/home/.claude/projects/*/*.jsonl"):
    lines += [local(l) for l in open(t).read().splitlines() if json.loads(l).get("type") in keep]
open(f"crates/loopguard-core/tests/fixtures/transcript-{version}.jsonl", "w").write("\n".join(lines) + "\n")
print(f"{sum(seen.values())} events into {out}; {len(lines)} transcript lines")
PY
