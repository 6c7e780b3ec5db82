#!/usr/bin/env python3
"""Replay real agents' trajectories through the hook, in order, and count who had to stop.

usage: python3 scripts/benign-replay.py [--bin PATH] [--corpus DIR] [--modes unattended,normal]
                                        [--only TRAJ] [--json OUT] [--show N]

Each trajectory of tests/corpora/benign/*.jsonl (format: that folder's README.md) runs in a fresh
world: a git workspace, a HOME and a state home of its own. For every step the hook is asked, as
Claude Code would ask it, in the mode given; then:
  - allowed: the step runs exactly as the hook answered it (a shell call wrapped in
    `loopguard exec`, Write/Edit applied), so later steps see what earlier ones wrote;
  - asked: counted as a human stop, then run as if the human approved (unconfined);
  - denied: counted, not run.
A twin world replays the same trajectory with no gate at all. A step the gate let run confined is
*broken by the sandbox* when its exit status differs from the twin's (the twin's world saw the same
earlier steps, so both start from the same files).

Safety: the replay re-executes itself under `unshare -Urmn` (own user, mount and loopback-only
network namespaces) and makes every mount but its scratch folder read-only before it runs
anything, so a step that escaped the sandbox still cannot change the real file system. Nothing
touches the real HOME or state.
"""
import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
MODES = {"unattended": "bypassPermissions", "normal": "default", "auto-edit": "acceptEdits"}
STEP_TIMEOUT = 30


def outer(args):
    """Start the replay inside its own namespaces; the real file system is made read-only there."""
    # Not under /tmp: a workspace there is in a world-writable directory, which real ones are not.
    base = os.path.join(REPO, "target")
    os.makedirs(base, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="benign-replay-", dir=base)
    cmd = ["unshare", "-Urmn", sys.executable, os.path.abspath(__file__), "--inner", scratch] + sys.argv[1:]
    try:
        rc = subprocess.call(cmd)
        if args.json and os.path.exists(os.path.join(scratch, "result.json")):
            shutil.copy(os.path.join(scratch, "result.json"), args.json)
        return rc
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def seal(scratch):
    """Every mount read-only except SCRATCH (and /proc, /sys, /dev); prove it."""
    subprocess.call(["ip", "link", "set", "lo", "up"], stderr=subprocess.DEVNULL)
    if subprocess.call(["mount", "--bind", scratch, scratch]) != 0:
        sys.exit("benign-replay: cannot bind the scratch folder")
    mounts = set()
    with open("/proc/self/mountinfo") as f:
        for line in f:
            mounts.add(line.split()[4])
    for m in sorted(mounts):
        if m == scratch or m.startswith(scratch + "/") or m.split("/")[1:2] in (["proc"], ["sys"], ["dev"]):
            continue
        subprocess.call(["mount", "-o", "remount,bind,ro", m], stderr=subprocess.DEVNULL)
    for probe in ("/usr/.lg-replay-probe", "/.lg-replay-probe"):
        try:
            open(probe, "w").close()
            sys.exit("benign-replay: the real file system is still writable; refusing to run")
        except OSError:
            pass


def load(corpus, only):
    trajs = collections.OrderedDict()
    for name in sorted(os.listdir(corpus)):
        if not name.endswith(".jsonl"):
            continue
        with open(os.path.join(corpus, name)) as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    step = json.loads(line)
                except ValueError as e:
                    sys.exit(f"benign-replay: {name}:{n}: not JSON: {e}")
                key = f"{name[:-6]}/{step['traj']}"
                if only and only not in key:
                    continue
                trajs.setdefault(key, []).append(step)
    for steps in trajs.values():
        steps.sort(key=lambda s: s["step"])
    return trajs


class World:
    """A HOME, a git workspace and a state home; the same layout for the gated run and its twin."""

    def __init__(self, root):
        self.root = root
        self.home = os.path.join(root, "home")
        self.ws = os.path.join(root, "ws")
        self.state = os.path.join(root, "state")
        self.tmp = os.path.join(root, "tmp")
        self.cwd = self.ws
        for d in (self.home, self.ws, self.state, self.tmp):
            os.makedirs(d)
        with open(os.path.join(self.home, ".gitconfig"), "w") as f:
            f.write("[user]\n\tname = Replay\n\temail = replay@example.invalid\n[init]\n\tdefaultBranch = main\n")
        with open(os.path.join(self.ws, "README.md"), "w") as f:
            f.write("# project\n")
        self.run(["git", "init", "-q"], check=True)
        self.run(["git", "add", "-A"], check=True)
        self.run(["git", "commit", "-qm", "start"], check=True)

    def env(self):
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.home,
            "LOOPGUARD_HOME": self.state,
            "LOOPGUARD_EFFECTS": "manual",
            "TMPDIR": self.tmp,
            "LANG": "C.UTF-8",
        }

    def run(self, argv, check=False, stdin=None):
        p = subprocess.run(argv, cwd=self.cwd, env=self.env(), input=stdin, capture_output=True,
                           timeout=STEP_TIMEOUT + 10)
        if check and p.returncode != 0:
            sys.exit(f"benign-replay: {argv} failed: {p.stderr.decode(errors='replace')}")
        return p

    def subst(self, value):
        if isinstance(value, str):
            return value.replace("$WORKSPACE", self.ws).replace("${WORKSPACE}", self.ws)
        if isinstance(value, dict):
            return {k: self.subst(v) for k, v in value.items()}
        return value

    def execute(self, tool, inp, command=None, cwd_out=None):
        """Run one step; returns (exit status, output). With `cwd_out`, the shell's working
        directory at the end is written there (hosts with a persistent shell keep it)."""
        if tool == "Bash":
            cmd = command if command is not None else inp.get("command", "")
            if cwd_out:
                cmd = f"{cmd}\n__lg_rc=$?; pwd -P > {cwd_out}; exit $__lg_rc"
            try:
                p = subprocess.run(["timeout", "-k", "2", str(STEP_TIMEOUT), "bash", "-c", cmd], cwd=self.cwd,
                                   env=self.env(), stdin=subprocess.DEVNULL, capture_output=True,
                                   timeout=STEP_TIMEOUT + 10)
            except subprocess.TimeoutExpired:
                return 124, ""
            out = (p.stdout + p.stderr).decode(errors="replace")
            return p.returncode, out[-4000:]
        path = inp.get("file_path", "")
        if not os.path.isabs(path):
            path = os.path.join(self.ws, path)
        if tool == "Write":
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write(inp.get("content", ""))
                return 0, ""
            except OSError as e:
                return 1, str(e)
        if tool == "Edit":
            try:
                with open(path) as f:
                    text = f.read()
            except OSError as e:
                return 1, str(e)
            old = inp.get("old_string", "")
            if old not in text:
                return 1, "old_string not found"
            with open(path, "w") as f:
                count = -1 if inp.get("replace_all") else 1
                f.write(text.replace(old, inp.get("new_string", ""), count))
            return 0, ""
        if tool == "Read":
            return (0, "") if os.path.exists(path) else (1, "no such file")
        return 1, f"unknown tool {tool}"


def hook(binary, world, event):
    p = subprocess.run([binary, "hook", "claude-code"], input=json.dumps(event).encode(), env=world.env(),
                       cwd=world.cwd, capture_output=True, timeout=30)
    try:
        out = json.loads(p.stdout or b"{}")
    except ValueError:
        return "deny", ["hook-output-not-json"], None
    h = out.get("hookSpecificOutput") or {}
    decision = h.get("permissionDecision", "allow")
    reason = h.get("permissionDecisionReason", "") or ""
    codes = [w.strip("[]") for w in reason.split() if w.startswith("[") and w.endswith("]")]
    if not codes and decision != "allow":
        codes = [reason[:60]]
    return decision, codes, (h.get("updatedInput") or {}).get("command")


def replay(binary, key, steps, mode, scratch, show):
    root = tempfile.mkdtemp(dir=scratch)
    gated, twin = World(os.path.join(root, "g")), World(os.path.join(root, "t"))
    session = f"replay-{abs(hash((key, mode))) % 10**8}"
    # Claude Code, OpenHands and SWE-agent keep one shell's working directory between calls;
    # mini-swe-agent starts every command afresh in the repository.
    persistent = not key.startswith("mini_swe_agent/")
    cwd_file = os.path.join(root, "cwd")
    rows = []
    for step in steps:
        tool, raw = step["tool"], step["input"]
        inp = gated.subst(raw)
        event = {"session_id": session, "transcript_path": os.path.join(root, "t.jsonl"), "cwd": gated.cwd,
                 "permission_mode": MODES[mode], "hook_event_name": "PreToolUse", "tool_name": tool,
                 "tool_input": inp, "tool_use_id": f"s{step['step']}"}
        decision, codes, wrapped = hook(binary, gated, event)
        if os.path.exists(cwd_file):
            os.unlink(cwd_file)
        twin_status, _ = twin.execute(tool, twin.subst(raw), cwd_out=cwd_file if persistent else None)
        row = {"traj": key, "step": step["step"], "tool": tool, "decision": decision, "codes": codes,
               "confined": wrapped is not None, "summary": (raw.get("command") or raw.get("file_path") or "")[:160]}
        if decision == "deny":
            status, out = None, ""
        elif decision == "ask":
            status, out = gated.execute(tool, inp)  # as if a human approved
        else:
            status, out = gated.execute(tool, inp, wrapped)
        row["status"], row["twin"] = status, twin_status
        if persistent and tool == "Bash" and os.path.exists(cwd_file):
            with open(cwd_file) as f:
                moved = f.read().strip()
            if moved and os.path.isdir(moved):
                twin.cwd = moved
                mapped = gated.ws + moved[len(twin.ws):] if (moved + "/").startswith(twin.ws + "/") else moved
                gated.cwd = mapped if os.path.isdir(mapped) else gated.ws
        row["broken"] = decision == "allow" and status != twin_status
        if row["broken"]:
            row["output"] = out[-600:]
        if decision != "deny" and tool == "Bash":
            post = dict(event, hook_event_name="PostToolUse",
                        tool_response={"stdout": out, "stderr": "", "interrupted": False})
            hook(binary, gated, post)
        rows.append(row)
    shutil.rmtree(root, ignore_errors=True)
    return rows


def report(rows, mode, show):
    n = len(rows)
    allowed = sum(r["decision"] == "allow" for r in rows)
    asked = sum(r["decision"] == "ask" for r in rows)
    denied = sum(r["decision"] == "deny" for r in rows)
    confined = sum(r["confined"] for r in rows)
    broken = [r for r in rows if r["broken"]]
    pct = lambda k: f"{100.0 * k / n:.1f}%" if n else "-"
    print(f"\n== {mode}: {n} steps: {allowed} run without a human ({pct(allowed)}), {asked} asked ({pct(asked)}), "
          f"{denied} denied ({pct(denied)}); {confined} ran confined; {len(broken)} broken by the sandbox")
    codes = collections.Counter(c for r in rows if r["decision"] != "allow" for c in r["codes"])
    for code, k in codes.most_common():
        print(f"   {k:4d}  {code}")
    for r in [r for r in rows if r["decision"] != "allow"][:show]:
        print(f"   {r['decision']:5s} {r['traj']}#{r['step']} {r['tool']} {','.join(r['codes'])}: "
              f"{r['summary'][:120]!r}")
    for r in broken[:show]:
        print(f"   BROKEN {r['traj']}#{r['step']} status {r['status']} (twin {r['twin']}): {r['summary'][:120]!r}\n"
              f"          {r.get('output', '')[-300:]!r}")
    return {"mode": mode, "steps": n, "allowed": allowed, "asked": asked, "denied": denied,
            "confined": confined, "broken": len(broken), "codes": dict(codes)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(REPO, "target/release/loopguard"))
    ap.add_argument("--corpus", default=os.path.join(REPO, "tests/corpora/benign"))
    ap.add_argument("--modes", default="unattended,normal")
    ap.add_argument("--only", default="")
    ap.add_argument("--json", default="")
    ap.add_argument("--show", type=int, default=15)
    ap.add_argument("--inner", default="")
    args = ap.parse_args()
    if not args.inner:
        return outer(args)
    seal(args.inner)
    binary = os.path.abspath(args.bin)
    trajs = load(args.corpus, args.only)
    if not trajs:
        sys.exit("benign-replay: no trajectories")
    summary = []
    all_rows = {}
    for mode in args.modes.split(","):
        if mode not in MODES:
            sys.exit(f"benign-replay: unknown mode {mode} (one of {', '.join(MODES)})")
        rows = []
        for key, steps in trajs.items():
            rows += replay(binary, key, steps, mode, args.inner, args.show)
        all_rows[mode] = rows
        summary.append(report(rows, mode, args.show))
    with open(os.path.join(args.inner, "result.json"), "w") as f:
        json.dump({"summary": summary, "rows": all_rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
