#!/usr/bin/env python3
"""Convert public agent trajectories into the loopguard benign replay corpus.

Reads source files out of bare git mirrors (``git --git-dir=M show COMMIT:PATH``)
and writes one JSONL file per agent into the output directory.  Every emitted
step is taken from a tool call that exists in the source file; nothing is
synthesised.  Conversions and skips are counted and printed as JSON so that
SOURCES.md can quote them.

Usage: python3 convert.py OUTDIR
"""
import collections
import json
import os
import re
import shlex
import subprocess
import sys

MIRROR = "/work/.mirror"
WS = "$WORKSPACE"
# prefix truncation: keep at most CAP[source] emitted steps per trajectory
CAP = {"claude_code": 60, "mini_swe_agent": 40, "openhands": 40, "swe_agent": 40}


def git_show(repo, commit, path):
    gd = os.path.join(MIRROR, repo.replace("/", "+"), "repo")
    return subprocess.run(
        ["git", "--git-dir", gd, "show", f"{commit}:{path}"],
        check=True, capture_output=True,
    ).stdout.decode("utf-8")


def rewrite(obj, roots):
    """Replace each agent repository root with $WORKSPACE in every string."""
    if isinstance(obj, str):
        for r in roots:
            obj = obj.replace(r, WS)
        return obj
    if isinstance(obj, dict):
        return {k: rewrite(v, roots) for k, v in obj.items()}
    if isinstance(obj, list):
        return [rewrite(v, roots) for v in obj]
    return obj


class Traj:
    def __init__(self, traj_id, roots, cap):
        self.id = traj_id
        self.cap = cap
        self.roots = roots
        self.steps = []
        self.skipped = collections.Counter()
        self.converted = collections.Counter()
        self.truncated = 0  # source actions dropped by the prefix cap

    def add(self, tool, inp, note=None):
        if len(self.steps) >= self.cap:
            self.truncated += 1
            return
        self.steps.append({"tool": tool, "input": rewrite(inp, self.roots)})
        if note:
            self.converted[note] += 1

    def skip(self, why):
        if len(self.steps) >= self.cap:
            self.truncated += 1
            return
        self.skipped[why] += 1

    def lines(self):
        for i, s in enumerate(self.steps):
            yield json.dumps({"traj": self.id, "step": i, "tool": s["tool"],
                              "input": s["input"]}, ensure_ascii=False)

    def summary(self):
        return {"traj": self.id, "steps": len(self.steps),
                "tools": dict(collections.Counter(s["tool"] for s in self.steps)),
                "converted": dict(self.converted), "skipped": dict(self.skipped),
                "dropped_after_cap": self.truncated}


# --------------------------------------------------------------------------
# Claude Code native transcripts (~/.claude/projects/<proj>/<session>.jsonl)
# --------------------------------------------------------------------------
def claude_code(traj_id, text, extra_roots=()):
    recs = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            recs.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    cwds = [r.get("cwd") for r in recs if isinstance(r, dict) and r.get("cwd")]
    # the session's project root is the first cwd recorded in the file
    roots = list(extra_roots) + ([cwds[0]] if cwds else [])
    t = Traj(traj_id, roots, CAP["claude_code"])
    seen = set()
    for r in recs:
        if not isinstance(r, dict) or r.get("type") != "assistant":
            continue
        content = r.get("message", {}).get("content")
        if not isinstance(content, list):
            continue
        for b in content:
            if not (isinstance(b, dict) and b.get("type") == "tool_use"):
                continue
            if b.get("id") in seen:  # duplicated record (resume/replay)
                continue
            seen.add(b.get("id"))
            name, inp = b.get("name"), b.get("input") or {}
            if name == "Bash":
                t.add("Bash", {"command": inp["command"]})
            elif name == "Write":
                t.add("Write", {"file_path": inp["file_path"], "content": inp["content"]})
            elif name == "Edit":
                e = {"file_path": inp["file_path"], "old_string": inp["old_string"],
                     "new_string": inp["new_string"]}
                if inp.get("replace_all"):
                    e["replace_all"] = True
                t.add("Edit", e)
            elif name == "Read":
                t.add("Read", {"file_path": inp["file_path"]})
            elif name == "MultiEdit":
                # MultiEdit applies its edits in order to one file: emit them
                # as consecutive Edit steps.
                for e in inp.get("edits", []):
                    ee = {"file_path": inp["file_path"], "old_string": e["old_string"],
                          "new_string": e["new_string"]}
                    if e.get("replace_all"):
                        ee["replace_all"] = True
                    t.add("Edit", ee, note="MultiEdit->Edit")
            else:
                t.skip(f"tool {name}")
    return t


# --------------------------------------------------------------------------
# mini-swe-agent (*.traj.json)
# --------------------------------------------------------------------------
MSWEA_RE = re.compile(r"```(?:mswea_bash_command|bash)\s*\n(.*?)\n```", re.DOTALL)


def mini_swe_agent(traj_id, text, roots=("/testbed",)):
    d = json.loads(text)
    msgs = d["messages"] if isinstance(d, dict) else d
    t = Traj(traj_id, list(roots), CAP["mini_swe_agent"])
    for m in msgs:
        if m.get("role") != "assistant":
            continue
        acts = (m.get("extra") or {}).get("actions")
        if acts is not None:  # tool-calling format (mini-swe-agent >= 2)
            if not acts:
                t.skip("assistant turn without action")
            for a in acts:
                t.add("Bash", {"command": a["command"]})
        else:  # text format: exactly one fenced block is executed
            blocks = MSWEA_RE.findall(m.get("content") or "")
            if len(blocks) == 1:
                t.add("Bash", {"command": blocks[0].strip()})
            else:
                t.skip(f"format error ({len(blocks)} code blocks, not executed)")
    return t


# --------------------------------------------------------------------------
# OpenHands event history (evaluation output.jsonl "history")
# --------------------------------------------------------------------------
def openhands(traj_id, history, root):
    t = Traj(traj_id, [root], CAP["openhands"])
    obs = {e.get("cause"): e for e in history if "observation" in e}
    for e in history:
        if e.get("source") != "agent" or "action" not in e:
            continue
        a, args = e["action"], e.get("args", {})
        if a == "run":
            if args.get("is_input"):
                t.skip("run is_input (stdin to running process)")
            elif not args.get("command", "").strip():
                t.skip("run with empty command")
            else:
                t.add("Bash", {"command": args["command"]})
        elif a == "read":
            o = obs.get(e["id"], {})
            c = o.get("content", "")
            if "files and directories up to" in c:
                t.skip("read of a directory (no Claude Code equivalent)")
            else:
                t.add("Read", {"file_path": args["path"]}, note="read->Read")
        elif a == "edit":
            cmd = args.get("command")
            if cmd == "str_replace":
                t.add("Edit", {"file_path": args["path"], "old_string": args["old_str"],
                               "new_string": args.get("new_str") or ""},
                      note="str_replace->Edit")
            elif cmd == "create":
                t.add("Write", {"file_path": args["path"], "content": args.get("file_text") or ""},
                      note="create->Write")
            elif cmd == "view":
                t.add("Read", {"file_path": args["path"]}, note="view->Read")
            else:
                t.skip(f"edit {cmd} (line-number based)")
        elif a in ("think", "finish", "system", "message", "recall"):
            continue  # not tool calls against the workspace
        else:
            t.skip(f"action {a}")
    return t


# --------------------------------------------------------------------------
# SWE-agent (*.traj)
# --------------------------------------------------------------------------
BASH_LIKE = re.compile(r"^(python3?|pip|ls|rm|cat|grep|find|cd|git|pytest|echo|mkdir|mv|cp)\b")


def swe_agent(traj_id, text, roots):
    d = json.loads(text)
    t = Traj(traj_id, list(roots), CAP["swe_agent"])
    # Prefer structured tool calls from history when the run used function calling.
    calls = []
    for m in d.get("history", []):
        if m.get("role") == "assistant" and m.get("tool_calls"):
            for c in m["tool_calls"]:
                calls.append((c["function"]["name"], json.loads(c["function"]["arguments"] or "{}")))
    if not calls:
        for s in d["trajectory"]:
            act = s["action"].strip()
            head = act.split(None, 1)[0] if act else ""
            rest = act[len(head):].strip()
            if head in ("open", "create", "find_file", "search_dir", "search_file",
                        "goto", "scroll_up", "scroll_down", "submit", "insert"):
                a = shlex.split(rest) if rest else []
                calls.append((head, {"_argv": a}))
            elif head == "edit":
                calls.append(("edit", {"_raw": rest}))
            else:
                calls.append(("bash", {"command": act}))
    open_file = None
    root = roots[0]

    def absp(p):
        return p if p.startswith("/") else f"{root}/{p}"

    for name, a in calls:
        if name == "bash":
            t.add("Bash", {"command": a["command"]})
        elif name == "open":
            p = a.get("path") or (a.get("_argv") or [None])[0]
            open_file = absp(p)
            t.add("Read", {"file_path": open_file}, note="open->Read")
        elif name == "create":
            p = a.get("filename") or (a.get("_argv") or [None])[0]
            open_file = absp(p)
            t.add("Write", {"file_path": open_file, "content": ""}, note="create->Write(empty)")
        elif name == "edit":
            if "search" in a:
                t.add("Edit", {"file_path": open_file, "old_string": a["search"],
                               "new_string": a["replace"]}, note="edit search/replace->Edit")
            elif "_raw" in a and re.match(r"^\d+:\d+\n", a["_raw"]):
                t.skip("edit with line numbers")
            elif "_raw" in a:
                argv = shlex.split(a["_raw"])
                e = {"file_path": open_file, "old_string": argv[0], "new_string": argv[1]}
                if len(argv) > 2 and argv[2] == "True":
                    e["replace_all"] = True
                t.add("Edit", e, note="edit search/replace->Edit")
            else:
                t.skip("edit (unrecognised form)")
        elif name == "insert":
            t.skip("insert (line based)")
        elif name == "submit":
            t.skip("submit (agent control)")
        else:
            t.skip(f"SWE-agent tool {name}")
    return t


# --------------------------------------------------------------------------
def main(outdir):
    out = collections.defaultdict(list)
    summaries = collections.defaultdict(list)

    def emit(source, traj):
        out[source].append(traj)
        summaries[source].append(traj.summary())

    # ---- Claude Code ----------------------------------------------------
    CR = ("DRMacIver/claude-reliability", "4e49f16a86de76d9b0dc3ea2b8526677abe89f52")
    for name in ["coverage-test-fix", "hello-world-script", "python-to-rust-port",
                 "stop-hook-fast-path-clean", "stop-hook-reflection-first-stop",
                 "stop-hook-uncommitted-changes"]:
        txt = git_show(CR[0], CR[1], f"snapshot-tests/tests/{name}/transcript.jsonl")
        emit("claude_code", claude_code(f"claude-reliability/{name}", txt))
    CCV = ("d-kimuson/claude-code-viewer", "9367cf006be9965c954e6cd36526f2195dce67ea")
    for sid in ["1af7fc5e-8455-4414-9ccd-011d40f70b2a", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7",
                "fe5e1c67-53e7-4862-81ae-d0e013e3270b"]:
        txt = git_show(CCV[0], CCV[1], f"mock-global-claude-dir/projects/sample-project/{sid}.jsonl")
        emit("claude_code", claude_code(f"claude-code-viewer/{sid}", txt))
    SP = ("marot/spotter", "8cc42b0bd39d04e71e509d7d58e6782ab435329f")
    for sid in ["258c7280-ae70-4798-800f-63464d01a85d", "4d5611e5-241a-462a-8d15-5122611a9569",
                "8463c716-a2ea-4c14-9efa-87158ebd9f20", "short", "subagent", "tool_heavy"]:
        txt = git_show(SP[0], SP[1], f"test/fixtures/transcripts/{sid}.jsonl")
        emit("claude_code", claude_code(f"spotter/{sid}", txt))

    # ---- mini-swe-agent --------------------------------------------------
    MS = "SWE-agent/mini-swe-agent"
    for p in ["tests/test_data/github_issue.traj.json"]:
        txt = git_show(MS, "a83fcae82d2a08f0ee0c688f9d137b3566c097f8", p)
        emit("mini_swe_agent", mini_swe_agent("mini-swe-agent/test_data/github_issue", txt))
    PR = "e5e0fbca1c60561bde25fa473b78717aa4b3f9ec"  # refs/pull/816/head
    # deterministic sample: first 2 trajectories (by name) of astropy and of django
    for iid in ["astropy__astropy-12907", "astropy__astropy-14182",
                "django__django-10914", "django__django-10924"]:
        txt = git_show(MS, PR, f"output/deepseek_chat_test_1-100/{iid}/{iid}.traj.json")
        emit("mini_swe_agent", mini_swe_agent(f"mini-swe-agent/pr816/deepseek_chat_test_1-100/{iid}", txt))

    # ---- OpenHands ------------------------------------------------------
    OH = ("OpenHands/OpenHands", "d6fab190bfb55f07cc380993b45ec4f781706a92")
    txt = git_show(OH[0], OH[1], "evaluation/benchmarks/multi_swe_bench/examples/output.jsonl")
    for line in txt.splitlines():
        d = json.loads(line)
        emit("openhands", openhands(f"openhands/multi_swe_bench_example/{d['instance_id']}",
                                    d["history"], "/workspace/ponylang__ponyc__0.1"))

    # ---- SWE-agent --------------------------------------------------------
    SA = ("SWE-agent/SWE-agent", "3ea751c087f32b16e039a2233dd6eefecef325d5")
    for p, roots in [
        ("tests/test_data/trajectories/gpt4__swe-agent__test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1/swe-agent__test-repo-i1.traj",
         ["/klieret__swe-agent-test-repo"]),
        ("tests/test_data/trajectories/gpt4__swe-agent-test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1/6e44b9__sweagenttestrepo-1c2844.traj",
         ["/SWE-agent__test-repo"]),
        ("tests/test_data/trajectories/gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1/pydicom__pydicom-1458.traj",
         ["/pydicom__pydicom"]),
        ("trajectories/demonstrations/human_thought__swe-bench-HumanEvalFix-python__lcb__t-0.00__p-0.95__c-4.00__install-0/humanevalfix-python-0.traj",
         ["/swe-bench__humanevalfix-python"]),
        ("trajectories/demonstrations/replay__marshmallow-code__marshmallow-1867__function_calling_replace_from_source/marshmallow-code__marshmallow-1867.traj",
         ["/testbed"]),
    ]:
        txt = git_show(SA[0], SA[1], p)
        tid = "swe-agent/" + p.split("/")[-2].split("__")[0] + "/" + p.split("/")[-1].rsplit(".", 1)[0]
        emit("swe_agent", swe_agent(tid, txt, roots))

    os.makedirs(outdir, exist_ok=True)
    for src, trajs in out.items():
        with open(os.path.join(outdir, f"{src}.jsonl"), "w", encoding="utf-8") as f:
            for tr in trajs:
                for ln in tr.lines():
                    f.write(ln + "\n")
    json.dump(summaries, sys.stdout, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
