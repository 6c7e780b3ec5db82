#!/usr/bin/env python3
"""Extract the block/allow command corpus stated by destructive_command_guard's tests.

Usage (from the loopguard repo root):

    python3 tests/corpora/dcg/extract.py /path/to/dcg.git > tests/corpora/dcg/corpus.tsv

The argument is a git directory (bare or not) of the dcg repository.  Files are
read with `git show <commit>:<path>`; nothing is copied except the literal
command strings the tests assert on, plus provenance (`path:line`).

Conflicts (same command expected both `block` and `allow` somewhere) are written
to `conflicts.txt` next to this script (override with --conflicts PATH).

Only the Python standard library is used.  The Rust "extraction" is a small
token-level interpreter, not a Rust parser: it follows string literals through
`let` bindings, arrays/tuples, `for` loops and helper calls, and reads the
expectation from the helper name (assert_blocks, assert_allows, ...) or from the
assertion that follows (`is_denied()`, `contains("deny")`, `is_none()` on a pack
check, ...).  Anything it cannot resolve to a literal is skipped.
"""

import argparse
import os
import re
import subprocess
import sys
import tomllib
from collections import Counter, OrderedDict, defaultdict

EXTRACT_DATE = "2026-12-01"

# --------------------------------------------------------------------------
# git access
# --------------------------------------------------------------------------


class Repo:
    def __init__(self, gitdir, rev="HEAD"):
        self.gitdir = gitdir
        self.commit = self._git("rev-parse", rev).strip()
        self.commit_date = self._git("log", "-1", "--format=%cI", self.commit).strip()
        self.files = self._git("ls-tree", "-r", "--name-only", self.commit).splitlines()

    def _git(self, *args):
        return subprocess.run(
            ["git", "-C", self.gitdir, *args], check=True, capture_output=True
        ).stdout.decode("utf-8", "replace")

    def read(self, path):
        r = subprocess.run(
            ["git", "-C", self.gitdir, "show", f"{self.commit}:{path}"],
            capture_output=True,
        )
        if r.returncode != 0:
            return None
        return r.stdout.decode("utf-8", "replace")


# --------------------------------------------------------------------------
# row collection
# --------------------------------------------------------------------------


class Rows:
    def __init__(self):
        self.rows = []  # dicts: expect, pack, source, command, kind
        self.skipped = Counter()

    def add(self, expect, pack, path, line, command, kind):
        assert expect in ("block", "allow")
        if command is None:
            return
        if command.strip() == "":
            self.skipped["empty command"] += 1
            return
        self.rows.append(
            dict(expect=expect, pack=pack or "-", source=f"{path}:{line}", command=command, kind=kind)
        )


def esc(s):
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


# --------------------------------------------------------------------------
# tests/corpus/**/*.toml
# --------------------------------------------------------------------------

CORPUS_EXCLUDE = {
    # expectations describe "pack not enabled by default" (docker/kubectl), i.e.
    # default-config behaviour, not all-packs-on behaviour
    "tests/corpus/edge_cases/future_packs.toml",
}


def case_lines(text, key_re):
    """Line numbers of `command = ...` keys in order, one per [[case]]."""
    out = []
    cur = None
    for i, ln in enumerate(text.splitlines(), 1):
        if ln.strip() == "[[case]]":
            if cur is not None:
                out.append(cur)
            cur = None
            out_start = i
            cur = ("start", out_start)
        elif re.match(key_re, ln) and cur is not None and cur[0] == "start":
            cur = ("cmd", i)
    if cur is not None:
        out.append(cur)
    return [c[1] for c in out]


def extract_corpus(repo, rows):
    for path in repo.files:
        if not (path.startswith("tests/corpus/") and path.endswith(".toml")):
            continue
        if path in CORPUS_EXCLUDE:
            rows.skipped[f"excluded file {path}"] += 1
            continue
        text = repo.read(path)
        data = tomllib.loads(text)
        cases = data.get("case", [])
        lines = case_lines(text, r"^\s*command\s*=")
        for idx, case in enumerate(cases):
            line = lines[idx] if idx < len(lines) else 0
            cmd = case.get("command")
            if cmd is None:  # hook_json cases (raw_input) are protocol tests
                rows.skipped["corpus case without command"] += 1
                continue
            exp = case.get("expected", case.get("expected_decision"))
            if exp not in ("allow", "deny"):
                rows.skipped["corpus case without allow/deny"] += 1
                continue
            rule = case.get("rule_id")
            log = case.get("log") or case.get("expected_log") or {}
            pack = "-"
            if rule and ":" in rule:
                pack = rule.split(":", 1)[0]
            elif log.get("pack_id"):
                pack = log["pack_id"]
            rows.add("block" if exp == "deny" else "allow", pack, path, line, cmd, "corpus-toml")


# --------------------------------------------------------------------------
# tests/e2e/fixtures/commands/*.txt
# --------------------------------------------------------------------------


def unescape_simple(s):
    out = []
    i = 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s) and s[i + 1] in "nt\\":
            out.append({"n": "\n", "t": "\t", "\\": "\\"}[s[i + 1]])
            i += 2
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def extract_txt_fixtures(repo, rows):
    for path in repo.files:
        if not (path.startswith("tests/e2e/fixtures/commands/") and path.endswith(".txt")):
            continue
        text = repo.read(path)
        base = os.path.basename(path)
        # heredocs.txt documents "\n for line breaks"; the others are literal.
        decode = base == "heredocs.txt"
        entries = []  # [expect, line, command]
        for i, ln in enumerate(text.split("\n"), 1):
            if ln.startswith("#") or ln == "":
                continue
            m = re.match(r"^(BLOCK|ALLOW|WARN):(.*)$", ln)
            if m:
                entries.append([m.group(1), i, m.group(2)])
            elif base in ("dangerous.txt", "safe.txt"):
                entries.append(["BLOCK" if base == "dangerous.txt" else "ALLOW", i, ln])
            elif entries:
                # continuation line of a multi-line (heredoc) entry
                entries[-1][2] += "\n" + ln
        for exp, line, cmd in entries:
            if exp == "WARN":
                rows.skipped["txt WARN entry"] += 1
                continue
            if decode:
                cmd = unescape_simple(cmd)
            rows.add(exp.lower(), "-", path, line, cmd, "e2e-fixture-txt")


# --------------------------------------------------------------------------
# tests/fixtures/*.yaml (pack fixtures, edge cases, scenarios)
# --------------------------------------------------------------------------


def yaml_scalar(s):
    s = s.strip()
    if s.startswith('"'):
        out = []
        i = 1
        while i < len(s) and s[i] != '"':
            if s[i] == "\\":
                e = s[i + 1]
                out.append({"n": "\n", "t": "\t", "\\": "\\", '"': '"', "/": "/", "0": "\0"}.get(e, "\\" + e))
                i += 2
            else:
                out.append(s[i])
                i += 1
        return "".join(out)
    if s.startswith("'"):
        body = s[1:]
        out = []
        i = 0
        while i < len(body):
            if body[i] == "'":
                if i + 1 < len(body) and body[i + 1] == "'":
                    out.append("'")
                    i += 2
                    continue
                break
            out.append(body[i])
            i += 1
        return "".join(out)
    return re.sub(r"\s+#.*$", "", s)


def extract_yaml_fixtures(repo, rows):
    for path in repo.files:
        if not (path.startswith("tests/fixtures/") and path.endswith(".yaml")):
            continue
        text = repo.read(path)
        lines = text.split("\n")
        base = os.path.basename(path)
        if "/scenarios/" in path:
            cur = None
            for i, ln in enumerate(lines, 1):
                m = re.match(r"^\s*-\s*command:\s*(.*)$", ln)
                if m:
                    if cur:
                        rows.skipped["scenario step without decision"] += 1
                    cur = dict(cmd=yaml_scalar(m.group(1)), line=i, pack="-")
                    continue
                m = re.match(r"^\s*expected_pack:\s*(.*)$", ln)
                if m and cur:
                    cur["pack"] = yaml_scalar(m.group(1)) or "-"
                m = re.match(r"^\s*expected_decision:\s*(.*)$", ln)
                if m and cur:
                    d = yaml_scalar(m.group(1))
                    if d in ("allow", "deny"):
                        rows.add("block" if d == "deny" else "allow", cur["pack"], path, cur["line"], cur["cmd"], "fixture-yaml")
                    cur = None
            continue
        section = None
        for i, ln in enumerate(lines, 1):
            m = re.match(r"^([A-Za-z0-9_.\-]+):\s*$", ln)
            if m:
                section = m.group(1)
                continue
            m = re.match(r"^\s*-\s*command:\s*(.*)$", ln)
            if not m or section is None:
                continue
            cmd = yaml_scalar(m.group(1))
            if base == "destructive_commands.yaml":
                rows.add("block", section, path, i, cmd, "fixture-yaml")
            elif base == "safe_commands.yaml":
                rows.add("allow", section, path, i, cmd, "fixture-yaml")
            elif base == "edge_cases.yaml":
                if section == "false_positives":
                    rows.add("allow", "-", path, i, cmd, "fixture-yaml")
                elif section == "false_negatives":
                    rows.add("block", "-", path, i, cmd, "fixture-yaml")


# --------------------------------------------------------------------------
# scripts/e2e_test.sh  (test_command "<cmd>" "block|allow" "<desc>")
# --------------------------------------------------------------------------


def bash_words(s):
    """Split a bash command line into words (quotes, $'..', backslashes).

    Returns None if a word relies on an expansion we do not perform."""
    words = []
    i = 0
    n = len(s)
    cur = None
    while i < n:
        c = s[i]
        if c in " \t":
            if cur is not None:
                words.append(cur)
                cur = None
            i += 1
            continue
        if c == "#" and cur is None:
            break
        if cur is None:
            cur = ""
        if c == "'":
            j = s.index("'", i + 1)
            cur += s[i + 1 : j]
            i = j + 1
        elif c == "$" and i + 1 < n and s[i + 1] == "'":
            i += 2
            while s[i] != "'":
                if s[i] == "\\":
                    e = s[i + 1]
                    mp = {"n": "\n", "t": "\t", "\\": "\\", "'": "'", '"': '"', "r": "\r", "e": "\x1b", "a": "\a"}
                    if e in mp:
                        cur += mp[e]
                        i += 2
                    elif e == "x":
                        m = re.match(r"[0-9A-Fa-f]{1,2}", s[i + 2 :])
                        cur += chr(int(m.group(0), 16))
                        i += 2 + len(m.group(0))
                    else:
                        cur += "\\" + e
                        i += 2
                else:
                    cur += s[i]
                    i += 1
            i += 1
        elif c == '"':
            i += 1
            while s[i] != '"':
                if s[i] == "\\" and s[i + 1] in '"\\$`':
                    cur += s[i + 1]
                    i += 2
                elif s[i] in "$`":
                    return None  # would be expanded by bash
                else:
                    cur += s[i]
                    i += 1
            i += 1
        elif c == "\\":
            cur += s[i + 1]
            i += 2
        elif c in "$`":
            return None
        else:
            cur += c
            i += 1
    if cur is not None:
        words.append(cur)
    return words


def extract_shell_e2e(repo, rows):
    path = "scripts/e2e_test.sh"
    if path not in repo.files:
        return
    text = repo.read(path)
    lines = text.split("\n")
    for i, ln in enumerate(lines, 1):
        m = re.match(r"^\s*(test_command|test_command_with_packs)\s+(.*)$", ln)
        if not m:
            continue
        words = None
        args = m.group(2)
        # a quoted argument may span several lines: extend until the words parse
        for extra in range(0, 30):
            if extra:
                if i - 1 + extra >= len(lines):
                    break
                args += "\n" + lines[i - 1 + extra]
            try:
                words = bash_words(args)
                break
            except (ValueError, IndexError):
                words = None
        if not words:
            rows.skipped["shell test_command not literal"] += 1
            continue
        cmd, exp = words[0], words[1] if len(words) > 1 else ""
        desc = words[-1] if len(words) > 2 else ""
        if re.search(r"\bno [\w.]+ pack\b|pack (?:not enabled|disabled)", desc):
            rows.skipped["shell test_command expecting allow because a pack is off"] += 1
            continue
        if exp not in ("block", "allow"):
            rows.skipped["shell test_command other expectation"] += 1
            continue
        pack = "-"
        if m.group(1) == "test_command_with_packs" and len(words) > 2 and "," not in words[2]:
            pack = words[2]
        rows.add(exp, pack, path, i, cmd, "shell-e2e")


# --------------------------------------------------------------------------
# Rust tokenizer / token tree
# --------------------------------------------------------------------------


def rust_tokenize(src):
    """Tokens: (kind, value, line). kind in str/id/num/char/life/p. Comments dropped."""
    toks = []
    i = 0
    n = len(src)
    line = 1
    while i < n:
        c = src[i]
        if c == "\n":
            line += 1
            i += 1
            continue
        if c in " \t\r":
            i += 1
            continue
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
            continue
        if src.startswith("/*", i):
            depth = 1
            j = i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth += 1
                    j += 2
                elif src.startswith("*/", j):
                    depth -= 1
                    j += 2
                else:
                    j += 1
            line += src.count("\n", i, j)
            i = j
            continue
        if c in "rb":
            m = re.match(r'(b?)r(#*)"', src[i : i + 300])
            if m:
                hashes = m.group(2)
                start = i + m.end()
                end = src.find('"' + hashes, start)
                if end < 0:
                    end = n
                toks.append(("str", src[start:end], line))
                line += src.count("\n", i, end)
                i = end + 1 + len(hashes)
                continue
        if c == '"' or (c == "b" and i + 1 < n and src[i + 1] == '"'):
            j = i + (2 if c == "b" else 1)
            out = []
            sl = line
            while j < n and src[j] != '"':
                ch = src[j]
                if ch == "\\" and j + 1 < n:
                    e = src[j + 1]
                    if e == "n":
                        out.append("\n"); j += 2
                    elif e == "t":
                        out.append("\t"); j += 2
                    elif e == "r":
                        out.append("\r"); j += 2
                    elif e == "0":
                        out.append("\0"); j += 2
                    elif e in "\\\"'":
                        out.append(e); j += 2
                    elif e == "x":
                        out.append(chr(int(src[j + 2 : j + 4], 16))); j += 4
                    elif e == "u":
                        k = src.index("}", j)
                        out.append(chr(int(src[j + 3 : k], 16))); j = k + 1
                    elif e == "\n":
                        # line continuation: skip newline and leading whitespace
                        j += 2
                        line += 1
                        while j < n and src[j] in " \t\n\r":
                            if src[j] == "\n":
                                line += 1
                            j += 1
                    else:
                        out.append("\\" + e); j += 2
                else:
                    if ch == "\n":
                        line += 1
                    out.append(ch)
                    j += 1
            toks.append(("str", "".join(out), sl))
            i = j + 1
            continue
        if c == "'":
            m = re.match(r"'(\\x[0-9a-fA-F]{2}|\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", src[i : i + 14])
            if m:
                toks.append(("char", m.group(0), line))
                i += m.end()
                continue
            m = re.match(r"'[A-Za-z_][A-Za-z0-9_]*", src[i:])
            if m:
                toks.append(("life", m.group(0), line))
                i += m.end()
                continue
            toks.append(("p", c, line))
            i += 1
            continue
        m = re.match(r"[A-Za-z_][A-Za-z0-9_]*", src[i : i + 200])
        if m:
            toks.append(("id", m.group(0), line))
            i += m.end()
            continue
        m = re.match(r"[0-9][0-9A-Za-z_]*(\.[0-9][0-9A-Za-z_]*)?", src[i : i + 100])
        if m:
            toks.append(("num", m.group(0), line))
            i += m.end()
            continue
        for p in ("::", "->", "=>", "==", "!=", "<=", ">=", "&&", "||", "..=", "...", "..", "+=", "-="):
            if src.startswith(p, i):
                toks.append(("p", p, line))
                i += len(p)
                break
        else:
            toks.append(("p", c, line))
            i += 1
    return toks


CLOSE = {"(": ")", "[": "]", "{": "}"}


def build_tree(toks):
    """Group bracketed tokens: ('g', open, children, line, endline)."""
    stack = [[]]
    opens = []
    for t in toks:
        if t[0] == "p" and t[1] in CLOSE:
            opens.append(t)
            stack.append([])
        elif t[0] == "p" and t[1] in ")]}":
            if not opens:
                continue
            o = opens.pop()
            ch = stack.pop()
            stack[-1].append(("g", o[1], ch, o[2], t[2]))
        else:
            stack[-1].append(t)
    while opens:
        o = opens.pop()
        ch = stack.pop()
        stack[-1].append(("g", o[1], ch, o[2], o[2]))
    return stack[0]


def flatten(nodes):
    for t in nodes:
        if t[0] == "g":
            yield ("p", t[1], t[3])
            yield from flatten(t[2])
            yield ("p", CLOSE[t[1]], t[4])
        else:
            yield t


def text_of(nodes):
    return " ".join(repr(t[1]) if t[0] == "str" else t[1] for t in flatten(nodes))


def is_p(t, v):
    return t[0] == "p" and t[1] == v


def is_id(t, v=None):
    return t[0] == "id" and (v is None or t[1] == v)


def is_g(t, o=None):
    return t[0] == "g" and (o is None or t[1] == o)


def split_top(nodes, sep=","):
    parts = [[]]
    for t in nodes:
        if is_p(t, sep):
            parts.append([])
        else:
            parts[-1].append(t)
    if parts and not parts[-1]:
        parts.pop()
    return parts


def split_top_multi(nodes, seps):
    parts = [[]]
    for t in nodes:
        if t[0] == "p" and t[1] in seps:
            parts.append([])
        else:
            parts[-1].append(t)
    return parts


def first_line(nodes):
    for t in flatten(nodes):
        return t[2]
    return 0


# --------------------------------------------------------------------------
# Rust: functions and test regions
# --------------------------------------------------------------------------


def find_fns(nodes, in_test, out, consts):
    attrs = []
    i = 0
    while i < len(nodes):
        t = nodes[i]
        if is_p(t, "#") and i + 1 < len(nodes) and is_g(nodes[i + 1], "["):
            attrs.append(text_of(nodes[i + 1][2]))
            i += 2
            continue
        if is_p(t, "#") and i + 2 < len(nodes) and is_p(nodes[i + 1], "!"):
            i += 3
            continue
        cfgtest = any(a.replace(" ", "").startswith("cfg(test") for a in attrs)
        if is_id(t, "mod") and i + 2 < len(nodes) and is_g(nodes[i + 2], "{"):
            find_fns(nodes[i + 2][2], in_test or cfgtest, out, consts)
            attrs = []
            i += 3
            continue
        if is_id(t, "impl") or is_id(t, "trait"):
            j = i + 1
            while j < len(nodes) and not is_g(nodes[j], "{"):
                j += 1
            if j < len(nodes):
                find_fns(nodes[j][2], in_test or cfgtest, out, consts)
            attrs = []
            i = j + 1
            continue
        if (is_id(t, "const") or is_id(t, "static")) and i + 1 < len(nodes) and is_id(nodes[i + 1]) and nodes[i + 1][1] != "fn":
            j = i + 1
            while j < len(nodes) and not is_p(nodes[j], "="):
                if is_p(nodes[j], ";"):
                    break
                j += 1
            k = j + 1
            while k < len(nodes) and not is_p(nodes[k], ";"):
                k += 1
            if j < len(nodes) and is_p(nodes[j], "="):
                consts[nodes[i + 1][1]] = nodes[j + 1 : k]
            attrs = []
            i = k + 1
            continue
        if is_id(t, "fn") and i + 1 < len(nodes) and is_id(nodes[i + 1]):
            name = nodes[i + 1][1]
            j = i + 2
            params = None
            while j < len(nodes):
                if is_g(nodes[j], "(") and params is None:
                    params = nodes[j]
                if is_g(nodes[j], "{") or is_p(nodes[j], ";"):
                    break
                j += 1
            if j < len(nodes) and is_g(nodes[j], "{"):
                body = nodes[j]
                is_test = any(
                    re.match(r"^(test|tokio :: test|rstest)\b", a.strip()) for a in attrs
                )
                ret = nodes[i + 2 : j]
                out.append(
                    dict(name=name, params=params, body=body, test=in_test or cfgtest or is_test,
                         is_test=is_test, attrs=attrs, line=t[2], ret=text_of(ret))
                )
                find_fns(body[2], in_test or cfgtest or is_test, out, consts)
            attrs = []
            i = j + 1
            continue
        if t[0] == "p" and t[1] in (";",) or is_g(t, "{"):
            attrs = []
        i += 1
    return out


# --------------------------------------------------------------------------
# Rust: expectation interpreter
# --------------------------------------------------------------------------

# Helpers with a fixed meaning.  kind: 'cmd' (one command), 'list' (slice of
# commands), 'var' (an output/result variable), 'decision' (cmd + "deny"/"allow")
# argpos: index of the command argument for a free-function call; for a method
# call (x.helper(...)) the index is argpos_method.
HELPERS = {
    # src/packs/test_helpers.rs (pack-level)
    "assert_blocks": ("block", "cmd", 1, 0),
    "assert_blocks_with_pattern": ("block", "cmd", 1, 0),
    "assert_blocks_with_severity": ("block", "cmd", 1, 0),
    "test_batch_blocks": ("block", "list", 1, 0),
    "assert_allows": ("allow", "cmd", 1, 0),
    "assert_safe_pattern_matches": ("allow", "cmd", 1, 0),
    "assert_no_match": ("allow", "cmd", 1, 0),
    "test_batch_allows": ("allow", "list", 1, 0),
    # src/packs/test_helpers.rs (full evaluator, default config)
    "assert_denies_with_rule": ("block", "cmd", 0, 0),
    "assert_allows_command": ("allow", "cmd", 0, 0),
    "assert_decision": (None, "decision", 0, 0),
    # src/packs/core/filesystem.rs
    "assert_rm_parser_allows": ("allow", "cmd", 0, 0),
    "assert_rm_parser_denies": ("block", "cmd", 0, 0),
    # tests/cli_e2e.rs
    "assert_hook_denies": ("block", "cmd", 0, 0),
    "assert_hook_allows": ("allow", "cmd", 0, 0),
    "assert_hook_denies_output": ("block", "var", 0, 0),
    # tests/security_regressions_v2.rs
    "check_blocked": ("block", "cmd", 0, 0),
    # tests/e2e/framework.rs
    "assert_blocked": ("block", "var", 0, 0),
    "assert_allowed": ("allow", "var", 0, 0),
    "assert_blocked_by_rule": ("block", "var", 0, 0),
}

# Calls that evaluate a command; the result (or output) carries the command.
EVALUATORS = {
    "evaluate_command", "evaluate_command_with_pack_order", "evaluate_command_with_deadline",
    "evaluate_command_with_pack_order_deadline", "evaluate_command_with_pack_order_at_path",
    "evaluate_command_with_pack_order_deadline_at_path", "evaluate_detailed",
    "evaluate_detailed_with_allowlists", "eval_snapshot", "eval_snapshot_with_config",
    "check_command", "check_command_with_details", "matches_destructive", "check",
    # local helpers in dcg's tests that run the hook/evaluator on a command
    "run_hook", "run_hook_mode", "run_hook_mode_raw", "run_hook_with_env", "run_hook_mode_with_env",
    "run_dcg_hook", "run_dcg_hook_with_env", "run_dcg_hook_in_dir", "run_hook_in_dir",
    "run_dcg_hook_in_dir_with_env", "run_dcg_hook_with_color", "run_dcg_hook_no_color",
    "run_test_command_as_agent", "run_test_command", "run_robot_mode", "evaluate",
    "make_hook_input", "sample_hook_input",
}
# Evaluators that take raw hook JSON rather than a command
RAW_INPUT_EVALUATORS = {"run_hook_mode_raw"}
# Evaluators whose boolean result *is* "denied" (local `fn evaluate(cmd) -> bool { ..is_denied() }`)
BOOL_DENIED = {"evaluate"}
# CLI runners taking an argv slice: dcg test <cmd> / dcg explain <cmd>
ARGV_RUNNERS = {"run_dcg", "run", "run_cli", "run_dcg_with_env", "run_robot_mode_with_env"}
ARGV_SUBCOMMANDS = {"test", "explain"}

STRIP_METHODS = {"to_string", "to_owned", "into", "as_str", "as_ref", "iter", "into_iter",
                 "copied", "cloned", "clone", "as_slice", "borrow", "unwrap"}

ASSERT_MACROS = {"assert", "assert_eq", "assert_ne", "debug_assert", "debug_assert_eq",
                 "debug_assert_ne", "prop_assert", "prop_assert_eq"}

# Signals read from assertion conditions.
SIG_BLOCK_METHODS = {"is_denied", "is_blocked", "is_deny", "denied", "would_block"}
SIG_ALLOW_METHODS = {"is_allowed", "is_allow"}

# A test function is "configuration dependent" if the expectation it states
# depends on configuration: allowlists / allow-once / overrides / policies and
# warn-log modes / disabled packs or heredoc scanning / strictness / time
# budgets / custom (external) packs / temporary rules.  Rows from such
# functions are excluded.  Hermetic defaults (empty allowlists, default
# overrides, DCG_ALLOWLIST_SYSTEM_PATH="", DCG_PACKS enabling packs, colour
# or output-format toggles) do not count.
BENIGN_RE = re.compile(
    r"default_allowlists \( \)|LayeredAllowlist :: default \( \)|load_default_allowlists \( \)|"
    r"'DCG_ALLOWLIST_SYSTEM_PATH' , ''|default_compiled_overrides \( \)|CompiledOverrides :: default \( \)|"
    r"\. overrides \. compile \( \)|"
    r"with_config \( 'minimal' \)|"  # tests/e2e/fixtures/configs/minimal.toml only enables core packs
    r"\. decision_mode \. is_some"
)
CONFIG_BODY_RE = re.compile(
    r"allowlist|Allowlist|allow_once|AllowOnce|allow-once|override|Override|policy|Policy|"
    r"'DCG_(POLICY|BYPASS|DISABLE|HEREDOC|MODE|STRICT|ALLOW)[A-Z_]*'|bypass_code|"
    r"strictness|git_awareness|GitAwareness|deadline|Deadline|budget|"
    r"heredoc \. enabled = Some \( false \)|\. disabled|disabled_packs|"
    r"with_config|with_config_content|write_config|config_content|"
    r"DecisionMode :: (Warn|Log)|"
    r"custom_pack|external|create_temp_pack|DCG_CUSTOM|custom_paths|"
    r"temporary|expires|languages|heredoc \. (timeout|max|limits)",
)
CONFIG_NAME_RE = re.compile(
    r"allowlist|allow_once|override|policy|pack_disabled|when_disabled|can_be_disabled|disabled_via|"
    r"strict|budget|deadline|warn|log_mode|temporary|expire|graduated|git_awareness|"
    r"custom_pack|external_pack|language_filter",
    re.I,
)


def config_text(nodes):
    """Body text without plain variable names (so `let allowlists = ..` is not a marker)."""
    fl = list(flatten(nodes))
    out = []
    in_use = False
    for k, t in enumerate(fl):
        if is_id(t, "use"):
            in_use = True
        if in_use:
            if is_p(t, ";"):
                in_use = False
            continue
        if t[0] == "id" and t[1][:1].islower():
            prev = fl[k - 1] if k else None
            nxt = fl[k + 1] if k + 1 < len(fl) else None
            is_field = prev is not None and is_p(prev, ".")
            is_call = nxt is not None and (is_p(nxt, "(") or is_p(nxt, "::") or is_p(nxt, "!"))
            if not is_field and not is_call:
                continue
        out.append(repr(t[1]) if t[0] == "str" else t[1])
    return " ".join(out)


def config_reason(name, body_txt):
    m = CONFIG_NAME_RE.search(name)
    if m:
        return "name:" + m.group(0)
    m = CONFIG_BODY_RE.search(BENIGN_RE.sub(" ", body_txt))
    if m:
        return "body:" + m.group(0)
    return None


class Elem:
    """A literal value: str / bool / tuple, with the line it was written on."""

    __slots__ = ("kind", "v", "line")

    def __init__(self, kind, v, line):
        self.kind, self.v, self.line = kind, v, line


class Val:
    """kind: 'data' (list of Elem; scalar => one elem, list => many),
    'res' (evaluation result carrying commands [(str,line)] and pack), 'pack' (pack id)."""

    __slots__ = ("kind", "elems", "is_list", "cmds", "pack", "src")

    def __init__(self, kind, elems=None, is_list=False, cmds=None, pack=None, src=None):
        self.kind = kind
        self.elems = elems or []
        self.is_list = is_list
        self.cmds = cmds or []
        self.pack = pack
        self.src = src


class RustExtractor:
    def __init__(self, path, text, rows, kind, file_pack, pack_by_module, global_consts):
        self.path = path
        self.rows = rows
        self.kind = kind
        self.file_pack = file_pack
        self.pack_by_module = pack_by_module
        self.tree = build_tree(rust_tokenize(text))
        self.consts = {}
        self.fns = find_fns(self.tree, path.startswith("tests/"), [], self.consts)
        self.global_consts = global_consts
        self.fn_pack = None
        self.fn_name = ""
        self.found = []  # (expect, pack, line, cmd)
        self.unresolved = []  # helper calls whose command argument is not a literal

    # -- emit ------------------------------------------------------------
    def emit(self, expect, pack, cmd_elem):
        if cmd_elem is None or cmd_elem.kind != "str":
            return
        self.found.append((expect, pack or "-", cmd_elem.line, cmd_elem.v))

    # -- value resolution --------------------------------------------------
    def resolve(self, nodes, env):
        nodes = list(nodes)
        # strip prefixes & * mut
        while nodes and (is_p(nodes[0], "&") or is_p(nodes[0], "*") or is_id(nodes[0], "mut") or is_p(nodes[0], "&&")):
            nodes = nodes[1:]
        # strip harmless trailing method calls / `as &str`
        changed = True
        while changed and len(nodes) >= 3:
            changed = False
            if is_g(nodes[-1], "(") and not nodes[-1][2] and is_id(nodes[-2]) and nodes[-2][1] in STRIP_METHODS and is_p(nodes[-3], "."):
                nodes = nodes[:-3]
                changed = True
            elif len(nodes) >= 4 and is_id(nodes[-3], "as"):
                nodes = nodes[:-3]
                changed = True
        if not nodes:
            return None
        if len(nodes) == 1:
            t = nodes[0]
            if t[0] == "str":
                return Val("data", [Elem("str", t[1], t[2])])
            if is_id(t, "true") or is_id(t, "false"):
                return Val("data", [Elem("bool", t[1] == "true", t[2])])
            if t[0] == "num" and t[1].isdigit():
                return Val("data", [Elem("num", int(t[1]), t[2])])
            if t[0] == "id":
                return self.lookup(t[1], env)
            if is_g(t, "["):
                return self.resolve_list(t[2], env)
            if is_g(t, "("):
                parts = split_top(t[2])
                if len(parts) == 1 and not any(is_p(x, ",") for x in t[2]):
                    return self.resolve(parts[0], env)
                items = []
                for p in parts:
                    v = self.resolve(p, env)
                    if v is None or v.kind != "data" or v.is_list or len(v.elems) != 1:
                        items.append(Elem("unk", None, first_line(p)))
                    else:
                        items.append(v.elems[0])
                return Val("data", [Elem("tuple", items, t[3])])
            return None
        # vec![..]
        if len(nodes) == 3 and is_id(nodes[0], "vec") and is_p(nodes[1], "!") and is_g(nodes[2], "["):
            return self.resolve_list(nodes[2][2], env)
        # String::from("..") / str::to_string(..)
        if len(nodes) == 4 and is_id(nodes[0]) and is_p(nodes[1], "::") and is_id(nodes[2], "from") and is_g(nodes[3], "("):
            return self.resolve(nodes[3][2], env)
        # path constant  Self::X / module::X
        if all(x[0] == "id" or is_p(x, "::") for x in nodes) and is_id(nodes[-1]):
            return self.lookup(nodes[-1][1], env)
        # format!("literal") with no placeholders
        if len(nodes) == 3 and is_id(nodes[0], "format") and is_p(nodes[1], "!") and is_g(nodes[2], "("):
            parts = split_top(nodes[2][2])
            if len(parts) == 1 and len(parts[0]) == 1 and parts[0][0][0] == "str" and "{" not in parts[0][0][1]:
                t = parts[0][0]
                return Val("data", [Elem("str", t[1], t[2])])
            return None
        # evaluation result
        return self.resolve_result(nodes, env)

    def resolve_list(self, inner, env):
        if any(is_p(x, ";") for x in inner):
            return None
        elems = []
        for p in split_top(inner):
            v = self.resolve(p, env)
            if v is None or v.kind != "data":
                elems.append(Elem("unk", None, first_line(p)))
                continue
            if v.is_list:
                elems.extend(v.elems)  # e.g. nested slices flattened (rare)
            else:
                elems.extend(v.elems)
        return Val("data", elems, is_list=True)

    def lookup(self, name, env):
        if name in env:
            return env[name]
        for consts in (self.consts, self.global_consts):
            if name in consts:
                v = self.resolve(consts[name], {})
                if v is not None:
                    return v
        return None

    def pack_of(self, nodes, env):
        """Pack id for a receiver/argument expression (e.g. &pack)."""
        nodes = [x for x in nodes if not is_p(x, "&")]
        if len(nodes) == 1 and is_id(nodes[0]):
            v = env.get(nodes[0][1])
            if v is not None and v.kind == "pack":
                return v.pack
        return self.file_pack

    def cmd_arg(self, args, env, idx=None):
        """Resolve the command argument among call args: list of Elem (str)."""
        cands = [idx] if idx is not None else range(len(args))
        for k in cands:
            if k >= len(args):
                continue
            v = self.resolve(args[k], env)
            if v is None:
                continue
            if v.kind == "data" and not v.is_list and v.elems and v.elems[0].kind == "str":
                return [v.elems[0]]
            if v.kind == "derived":
                return v.cmds
        return None

    def resolve_result(self, nodes, env):
        """An expression that evaluates commands -> Val('res')."""
        cmds = []
        pack = None
        src = None
        for i, t in enumerate(nodes):
            if not (t[0] == "id" and i + 1 < len(nodes) and is_g(nodes[i + 1], "(")):
                continue
            name = t[1]
            args = split_top(nodes[i + 1][2])
            is_method = i > 0 and is_p(nodes[i - 1], ".")
            if name in ARGV_RUNNERS:
                c = self.argv_cmd(args, env)
                if c:
                    c, sub = c
                    cmds += c
                    src = src or ("argv-" + sub)
                continue
            if name not in EVALUATORS:
                continue
            if name == "check" and not is_method:
                continue
            if name in RAW_INPUT_EVALUATORS:
                # takes hook JSON: only count it when built from a command by make_hook_input
                for a in args:
                    v = self.resolve(a, env)
                    if v is not None and v.kind == "derived":
                        cmds += v.cmds
                        src = src or name
                        break
                continue
            if name in ("make_hook_input", "sample_hook_input"):
                c = self.cmd_arg(args, env, 0)
                if c:
                    return Val("derived", cmds=c)
                continue
            c = self.cmd_arg(args, env, 0 if name not in ("run_dcg_hook_in_dir_with_env",) else None)
            if c is None and name in ("run_dcg_hook_in_dir_with_env", "run_hook_in_dir"):
                c = self.cmd_arg(args, env)
            if c:
                cmds += c
                if name in ("check", "matches_destructive"):
                    recv = []
                    j = i - 2
                    if j >= 0 and is_id(nodes[j]):
                        recv = [nodes[j]]
                    if recv and recv[0][1] == "REGISTRY":
                        pack = "-"
                        src = src or "registry"
                    else:
                        pack = self.pack_of(recv, env)
                        src = "check"
                else:
                    src = src or ("bool" if name in BOOL_DENIED else name)
        if cmds:
            return Val("res", cmds=[(c.v, c.line) for c in cmds], pack=pack, src=src)
        # taint: derived from a result variable
        for t in flatten(nodes):
            if t[0] == "id" and t[1] in env and env[t[1]].kind in ("res",):
                r = env[t[1]]
                return Val("res", cmds=r.cmds, pack=r.pack, src="derived-" + (r.src or ""))
        for t in flatten(nodes):
            if t[0] == "id" and t[1] in env and env[t[1]].kind == "derived":
                return env[t[1]]
        # pack creation
        txt = text_of(nodes)
        m = re.search(r"((?:[A-Za-z_]+ :: )*)create_pack \( \)", txt)
        if m:
            mod = m.group(1).replace(" ", "").strip(":")
            mod = re.sub(r"^(crate::)?(packs::)?", "", mod)
            pid = self.pack_by_module.get(mod, self.file_pack) if mod else self.file_pack
            return Val("pack", pack=pid)
        m = re.search(r"REGISTRY \. get \( '([^']+)' \)", txt)
        if m:
            return Val("pack", pack=m.group(1))
        return None

    def argv_cmd(self, args, env):
        if not args:
            return None
        v = self.resolve(args[0], env)
        if v is None or v.kind != "data" or not v.is_list:
            return None
        el = v.elems
        strs = [e.v if e.kind == "str" else None for e in el]
        sub = None
        for k, s in enumerate(strs):
            if s in ARGV_SUBCOMMANDS:
                sub = k
                break
            if s is None or not s.startswith("-"):
                break
        if sub is None:
            return None
        rest = el[sub + 1 :]
        if not rest or rest[-1].kind != "str" or rest[-1].v.startswith("-"):
            return None
        # a flag immediately before the last element that takes a value?
        if len(rest) >= 2 and rest[-2].kind == "str" and rest[-2].v in (
            "--config", "--with-packs", "--packs", "--agent", "--cwd", "--heredoc-timeout") :
            return None
        return [rest[-1]], strs[sub]

    # -- binding -------------------------------------------------------------
    def bind(self, pat, val, env):
        pat = [x for x in pat if not (is_id(x, "mut") or is_id(x, "ref") or is_p(x, "&"))]
        # drop type annotation
        if any(is_p(x, ":") for x in pat):
            k = next(i for i, x in enumerate(pat) if is_p(x, ":"))
            pat = pat[:k]
        if len(pat) == 1 and is_id(pat[0]):
            if val is not None:
                env[pat[0][1]] = val
            else:
                env.pop(pat[0][1], None)
            return
        if len(pat) == 1 and is_g(pat[0], "("):
            subs = split_top(pat[0][2])
            if val is not None and val.kind == "data" and not val.is_list and val.elems and val.elems[0].kind == "tuple":
                items = val.elems[0].v
                for k, sp in enumerate(subs):
                    if k < len(items) and items[k].kind != "unk":
                        self.bind(sp, Val("data", [items[k]]), env)
                    else:
                        self.bind(sp, None, env)
                return
            for sp in subs:  # result tuple: every name carries the result
                self.bind(sp, val if (val is not None and val.kind in ("res", "derived")) else None, env)
            return
        # struct patterns etc: ignore

    # -- statements ----------------------------------------------------------
    def split_statements(self, nodes):
        stmts = []
        cur = []
        i = 0
        while i < len(nodes):
            t = nodes[i]
            cur.append(t)
            if is_p(t, ";"):
                stmts.append(cur[:-1])
                cur = []
            elif is_g(t, "{"):
                head = cur[0]
                block_stmt = (len(cur) == 1) or (head[0] == "id" and head[1] in ("for", "if", "while", "loop", "match", "unsafe"))
                nxt = nodes[i + 1] if i + 1 < len(nodes) else None
                if block_stmt and not (nxt is not None and is_id(nxt, "else")):
                    # `if` condition may itself contain braces only in closures; fine.
                    if head[0] == "id" and head[1] in ("if", "while", "match") and nxt is not None and (is_p(nxt, ".") or is_p(nxt, "?")):
                        pass
                    else:
                        stmts.append(cur)
                        cur = []
            i += 1
        if cur:
            stmts.append(cur)
        return stmts

    def run_block(self, nodes, env):
        for st in self.split_statements(nodes):
            if not st:
                continue
            try:
                self.run_stmt(st, env)
            except (IndexError, ValueError, KeyError, StopIteration):
                pass

    def run_stmt(self, st, env):
        head = st[0]
        if is_id(head, "let"):
            k = None
            for i, x in enumerate(st):
                if is_p(x, "="):
                    k = i
                    break
            if k is None:
                return
            pat = st[1:k]
            expr = st[k + 1 :]
            # let .. else { .. }
            if len(expr) >= 2 and is_g(expr[-1], "{") and is_id(expr[-2], "else"):
                expr = expr[:-2]
            self.scan_expr(expr, env)
            self.bind(pat, self.resolve(expr, env), env)
            return
        if is_id(head, "for"):
            k = next(i for i, x in enumerate(st) if is_id(x, "in"))
            pat = st[1:k]
            body = st[-1]
            it = st[k + 1 : -1]
            if not is_g(body, "{"):
                return
            v = self.resolve(it, env)
            if v is not None and v.kind == "data" and v.is_list:
                for el in v.elems:
                    e2 = dict(env)
                    self.bind(pat, Val("data", [el]) if el.kind != "unk" else None, e2)
                    self.run_block(body[2], e2)
            else:
                e2 = dict(env)
                self.bind(pat, None, e2)
                self.run_block(body[2], e2)
            return
        if head[0] == "id" and head[1] in ("if", "while", "loop", "match", "unsafe", "else"):
            for x in st:
                if is_g(x, "{"):
                    if head[1] == "match":
                        continue
                    self.run_block(x[2], dict(env))
            return
        if is_g(head, "{") and len(st) == 1:
            self.run_block(head[2], dict(env))
            return
        self.scan_expr(st, env)

    # -- expressions -----------------------------------------------------------
    def scan_expr(self, nodes, env):
        i = 0
        while i < len(nodes):
            t = nodes[i]
            # macro
            if t[0] == "id" and t[1] in ASSERT_MACROS and i + 2 < len(nodes) and is_p(nodes[i + 1], "!") and is_g(nodes[i + 2]):
                self.assertion(t[1], nodes[i + 2][2], env)
                i += 3
                continue
            if t[0] == "id" and i + 1 < len(nodes) and is_g(nodes[i + 1], "("):
                name = t[1]
                is_method = i > 0 and is_p(nodes[i - 1], ".")
                args = split_top(nodes[i + 1][2])
                if name in HELPERS:
                    self.helper(name, args, is_method, nodes, i, env)
                # pack.check(X).expect(..) / .unwrap()  => blocked
                if name in ("check", "matches_destructive") and is_method and i + 3 < len(nodes) and is_p(nodes[i + 2], ".") \
                        and is_id(nodes[i + 3]) and nodes[i + 3][1] in ("expect", "unwrap", "unwrap_or_else"):
                    recv = nodes[i - 2] if i >= 2 else None
                    if recv is not None and is_id(recv) and recv[1] != "REGISTRY":
                        c = self.cmd_arg(args, env, 0)
                        if c:
                            for e in c:
                                self.emit("block", self.pack_of([recv], env), e)
            if is_g(t, "{"):
                self.run_block(t[2], dict(env))
            elif is_g(t):
                self.scan_expr(t[2], env)
            i += 1

    def helper(self, name, args, is_method, nodes, i, env):
        expect, kind, pos, mpos = HELPERS[name]
        idx = mpos if is_method else pos
        pack = self.file_pack
        if not is_method and pos == 1 and args:
            pack = self.pack_of(args[0], env)
        elif is_method and i >= 2 and is_id(nodes[i - 2]):
            pv = env.get(nodes[i - 2][1])
            if pv is not None and pv.kind == "pack":
                pack = pv.pack
        if name in ("assert_denies_with_rule",) and len(args) > 1:
            r = self.resolve(args[1], env)
            if r is not None and r.kind == "data" and r.elems and r.elems[0].kind == "str" and ":" in r.elems[0].v:
                pack = r.elems[0].v.split(":")[0]
        if pack is None:
            pack = "-"
        if kind == "decision":
            if len(args) < 2:
                return
            d = self.resolve(args[1], env)
            if d is None or d.kind != "data" or not d.elems or d.elems[0].kind != "str":
                return
            dv = d.elems[0].v.lower()
            expect = "block" if dv == "deny" else "allow" if dv == "allow" else None
            if expect is None:
                return
            kind = "cmd"
        if idx >= len(args):
            return
        if kind == "cmd":
            c = self.cmd_arg(args, env, idx)
            if not c:
                self.unresolved.append((name, first_line(args[idx]), text_of(args[idx])[:80]))
            for e in c or []:
                self.emit(expect, pack, e)
        elif kind == "list":
            v = self.resolve(args[idx], env)
            if v is not None and v.kind == "data":
                for e in v.elems:
                    self.emit(expect, pack, e)
        elif kind == "var":
            v = self.resolve(args[idx], env)
            if v is not None and v.kind == "res":
                for c, ln in v.cmds:
                    self.emit(expect, v.pack or pack, Elem("str", c, ln))

    # -- assertions --------------------------------------------------------------
    def conjunct_signal(self, toks, env, subj_pack):
        """Return (expect, cmds, pack) for one conjunct, or None."""
        neg = False
        toks = list(toks)
        while toks and is_p(toks[0], "!"):
            neg = not neg
            toks = toks[1:]
        if len(toks) == 1 and is_g(toks[0], "("):
            return self.condition(toks[0][2], env, neg)
        flat = list(flatten(toks))
        sig = set()
        # `a != b` flips the reading of a decision comparison
        cmp_ops = [t[1] for t in toks if t[0] == "p" and t[1] in ("==", "!=")]
        if cmp_ops == ["!="]:
            neg = not neg
        if cmp_ops:
            for t in toks:
                if t[0] == "str":
                    ls = t[1].lower().strip()
                    if ls in ("deny", "denied", "block", "blocked"):
                        sig.add("block")
                    elif ls in ("allow", "allowed"):
                        sig.add("allow")
        # subject: inline evaluator call, or variables carrying results
        res = self.resolve_result(toks, env)
        if res is None or res.kind != "res":
            return None
        src = res.src or ""
        for k, t in enumerate(flat):
            if t[0] == "id":
                if t[1] in SIG_BLOCK_METHODS:
                    sig.add("block")
                elif t[1] in SIG_ALLOW_METHODS:
                    sig.add("allow")
                elif t[1] in ("Deny", "Denied", "Block", "Blocked"):
                    sig.add("block")
                elif t[1] in ("Allow", "Allowed"):
                    sig.add("allow")
                elif t[1] == "blocked" and k > 0 and is_p(flat[k - 1], ".") and not (k + 1 < len(flat) and is_p(flat[k + 1], "(")):
                    sig.add("block")
                elif t[1] in ("is_some", "is_none") and src.endswith("check"):
                    sig.add("block" if t[1] == "is_some" else "allow")
                elif t[1] == "matches_safe":
                    pass
                elif t[1] in ("contains", "starts_with", "ends_with") and k + 2 < len(flat) and is_p(flat[k + 1], "("):
                    a = flat[k + 2]
                    s = None
                    if a[0] == "str":
                        s = a[1]
                    elif a[0] == "id" and a[1] in env and env[a[1]].kind == "data" and env[a[1]].elems and env[a[1]].elems[0].kind == "str":
                        s = env[a[1]].elems[0].v
                    if s is not None:
                        ls = s.lower()
                        if re.search(r"allowlist|allow-once|allow_once|allowed_by", ls):
                            pass
                        elif re.search(r"\b(deny|denied|blocked)\b", ls):
                            sig.add("block")
                        elif re.search(r"\b(allow|allowed)\b", ls):
                            sig.add("allow")
                elif t[1] == "is_empty" and not src.endswith("check") and src not in ("registry",):
                    # hook output: empty stdout == allow (only for hook/robot runners)
                    chain = [x[1] for x in flat[:k] if x[0] == "id"]
                    if "stdout" in chain or chain[:1] in (["output"], ["out"], ["result"]) and "stderr" not in chain:
                        if "stderr" not in chain and "matches" not in chain:
                            sig.add("allow")
        if not sig:
            return None
        if len(sig) > 1:
            return None
        e = sig.pop()
        if neg:
            e = "block" if e == "allow" else "allow"
        return (e, res.cmds, res.pack)

    def condition(self, toks, env, neg=False):
        """Evaluate an assert! condition into list of (expect, cmds, pack)."""
        out = []
        disj = split_top_multi(toks, ("||",))
        if len(disj) > 1:
            rs = [self.condition(d, env, neg) for d in disj]
            flat = [x for r in rs for x in r]
            exps = {x[0] for x in flat}
            if len(exps) == 1 and all(rs):
                cmdset = {}
                for x in flat:
                    for c in x[1]:
                        cmdset[c] = (x[0], x[2])
                return [(flat[0][0], list(cmdset.keys()), flat[0][2])]
            return []
        for conj in split_top_multi(toks, ("&&",)):
            if neg and len(split_top_multi(toks, ("&&",))) > 1:
                return []  # !(a && b) — ambiguous
            r = self.conjunct_signal(conj, env, None)
            if r:
                e, cmds, pack = r
                if neg:
                    e = "block" if e == "allow" else "allow"
                out.append((e, cmds, pack))
        return out

    def eq_signal(self, a, b, env):
        """assert_eq!(a, b): one side is a result expression, the other a decision literal."""
        for x, y in ((a, b), (b, a)):
            res = self.resolve_result(x, env)
            if res is None or res.kind != "res":
                continue
            # literal side
            yv = self.resolve(y, env)
            lit = None
            if yv is not None and yv.kind == "data" and not yv.is_list and yv.elems:
                lit = yv.elems[0]
            ytxt = text_of(y)
            xflat = [t[1] for t in flatten(x) if t[0] == "id"]
            exp = None
            if lit is not None and lit.kind == "str":
                ls = lit.v.lower().strip()
                if ls in ("deny", "denied", "block", "blocked"):
                    exp = "block"
                elif ls in ("allow", "allowed"):
                    exp = "allow"
                # Some("deny")
            elif lit is not None and lit.kind == "bool":
                base = None
                if any(m in xflat for m in SIG_BLOCK_METHODS) or (xflat and xflat[-1] == "blocked"):
                    base = "block"
                elif any(m in xflat for m in SIG_ALLOW_METHODS):
                    base = "allow"
                elif res.src == "bool":
                    base = "block"
                if base:
                    exp = base if lit.v else ("allow" if base == "block" else "block")
            elif lit is not None and lit.kind == "num" and (res.src or "").endswith("argv-test"):
                # `dcg test <cmd>` exits 0 when allowed, 1 when denied
                if any("exit" in n or n == "code" for n in xflat):
                    exp = {0: "allow", 1: "block"}.get(lit.v)
            if exp is None:
                m = re.search(r"\b(Deny|Denied|Allow|Allowed)\b", ytxt)
                if m and "::" in ytxt:
                    exp = "block" if m.group(1).startswith("Den") else "allow"
                m2 = re.search(r"Some \( '(deny|allow)' \)", ytxt)
                if m2:
                    exp = "block" if m2.group(1) == "deny" else "allow"
            if exp:
                return (exp, res.cmds, res.pack)
        return None

    def assertion(self, mac, inner, env):
        args = split_top(inner)
        if not args:
            return
        results = []
        if mac in ("assert", "debug_assert", "prop_assert"):
            cond = args[0]
            # matches!(x, EvaluationDecision::Deny)
            if len(cond) == 3 and is_id(cond[0], "matches") and is_p(cond[1], "!"):
                margs = split_top(cond[2][2])
                if len(margs) >= 2:
                    r = self.eq_signal(margs[0], margs[1], env)
                    if r:
                        results.append(r)
            else:
                # bool-returning local evaluator: assert!(evaluate("..")) / assert!(!evaluate(..))
                c = list(cond)
                neg = False
                while c and is_p(c[0], "!"):
                    neg = not neg
                    c = c[1:]
                if len(c) == 2 and is_id(c[0]) and c[0][1] in BOOL_DENIED and is_g(c[1], "("):
                    cmds = self.cmd_arg(split_top(c[1][2]), env, 0)
                    if cmds:
                        results.append(("allow" if neg else "block", [(e.v, e.line) for e in cmds], None))
                elif len(c) == 1 and is_id(c[0]) and c[0][1] in env and env[c[0][1]].kind == "res" and env[c[0][1]].src == "bool":
                    r = env[c[0][1]]
                    results.append(("allow" if neg else "block", r.cmds, r.pack))
                else:
                    results.extend(self.condition(cond, env))
        elif mac in ("assert_eq", "debug_assert_eq", "prop_assert_eq", "assert_ne", "debug_assert_ne"):
            if len(args) >= 2:
                r = self.eq_signal(args[0], args[1], env)
                if r:
                    e, cmds, pack = r
                    if mac.endswith("_ne"):
                        # assert_ne!(decision, "deny") => allow (binary decision)
                        e = "block" if e == "allow" else "allow"
                    results.append((e, cmds, pack))
        for e, cmds, pack in results:
            for c, ln in cmds:
                self.emit(e, pack if pack else self.default_pack_for_assert(), Elem("str", c, ln))

    def default_pack_for_assert(self):
        if self.fn_pack:
            return self.fn_pack
        return self.file_pack if self.kind == "pack-unit" else "-"

    # -- driver ---------------------------------------------------------------
    def run(self):
        for fn in self.fns:
            if not fn["test"]:
                continue
            if not fn["is_test"]:
                continue  # helpers are only interpreted through their call sites
            if any(a.strip().startswith(("should_panic", "ignore")) for a in fn["attrs"]):
                self.rows.skipped["rust #[ignore]/#[should_panic] tests"] += 1
                continue
            body_txt = config_text(fn["body"][2])
            cfg = None if self.kind == "pack-unit" and self.path != "src/packs/mod.rs" else config_reason(fn["name"], body_txt)
            before = len(self.found)
            # a test that enables exactly one pack (enabled.insert("x.y") / packs.enabled.push("x.y"))
            enabled = set(re.findall(r"\. (?:insert|push) \( '([a-z_]+\.[a-z_0-9]+)' (?:\. (?:to_string|to_owned|into) \( \) )?\)", text_of(fn["body"][2])))
            self.fn_pack = enabled.pop() if len(enabled) == 1 else None
            self.run_block(fn["body"][2], {})
            new = self.found[before:]
            del self.found[before:]
            if cfg:
                if new:
                    self.rows.skipped["rust rows in config-dependent tests"] += len(new)
                    self.rows.excluded_tests.append((self.path, fn["line"], fn["name"], len(new), cfg))
                continue
            for e, pack, line, cmd in new:
                self.rows.add(e, pack, self.path, line, cmd, self.kind)


def pack_ids(repo):
    """module path ('database::postgresql') -> pack id, and file -> pack id."""
    by_mod = {}
    by_file = {}
    for path in repo.files:
        if not (path.startswith("src/packs/") and path.endswith(".rs")):
            continue
        text = repo.read(path) or ""
        m = re.search(r'\bid:\s*"([a-z0-9_.]+)"\s*\.to_string\(\)', text)
        if not m:
            continue
        rel = path[len("src/packs/") : -3]
        if rel.endswith("/mod"):
            rel = rel[: -len("/mod")]
        by_mod[rel.replace("/", "::")] = m.group(1)
        by_file[path] = m.group(1)
    return by_mod, by_file


def extract_rust(repo, rows):
    by_mod, by_file = pack_ids(repo)
    rows.excluded_tests = []
    paths = [p for p in repo.files if p.endswith(".rs") and (p.startswith("src/") or p.startswith("tests/"))]
    for path in sorted(paths, key=lambda p: (0 if p.startswith("src/packs/") else 1 if p.startswith("src/") else 2, p)):
        text = repo.read(path)
        if text is None:
            rows.skipped[f"unreadable {path}"] += 1
            continue
        if path.startswith("src/packs/"):
            kind = "pack-unit"
            fpack = by_file.get(path)
            if fpack is None and path in ("src/packs/test_template.rs", "src/packs/test_helpers.rs"):
                fpack = "core.git"  # both use core::git::create_pack()
        elif path.startswith("src/"):
            kind = "src-unit"
            fpack = "-"
        else:
            kind = "rust-integration"
            fpack = "-"
        try:
            ex = RustExtractor(path, text, rows, kind, fpack, by_mod, {})
            ex.run()
            for name, line, txt in ex.unresolved:
                rows.skipped["helper call with non-literal command"] += 1
                rows.unresolved.append((path, line, name, txt))
        except RecursionError:
            rows.skipped[f"recursion error {path}"] += 1


# --------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("gitdir")
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--conflicts", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "conflicts.txt"))
    ap.add_argument("--stats", action="store_true", help="print per-kind / per-pack counts to stderr")
    a = ap.parse_args()

    repo = Repo(a.gitdir, a.rev)
    rows = Rows()
    rows.excluded_tests = []
    rows.unresolved = []
    # order matters for "keep first" de-duplication: pack unit tests first
    extract_rust(repo, rows)
    extract_corpus(repo, rows)
    extract_shell_e2e(repo, rows)
    extract_txt_fixtures(repo, rows)
    extract_yaml_fixtures(repo, rows)

    raw = rows.rows
    seen = OrderedDict()
    for r in raw:
        key = (r["expect"], r["command"])
        if key not in seen:
            seen[key] = r
    final = list(seen.values())

    by_cmd = defaultdict(dict)
    for r in final:
        by_cmd[r["command"]][r["expect"]] = r
    conflicts = [c for c, d in by_cmd.items() if len(d) == 2]

    raw_kind = Counter((r["kind"], r["expect"]) for r in raw)
    fin_kind = Counter((r["kind"], r["expect"]) for r in final)
    nb = sum(1 for r in final if r["expect"] == "block")
    na = len(final) - nb

    kinds = ["pack-unit", "src-unit", "rust-integration", "corpus-toml", "shell-e2e", "e2e-fixture-txt", "fixture-yaml"]
    kind_desc = {
        "pack-unit": "src/packs/**.rs unit tests (assert_blocks*, assert_allows, assert_safe_pattern_matches, assert_no_match, test_batch_*, pack.check(..).is_none()/.is_some()/.expect(..), rm-parser helpers)",
        "src-unit": "other src/**.rs unit tests (evaluate_command / eval_snapshot / hook results followed by is_denied()/is_allowed()/decision asserts)",
        "rust-integration": "tests/**.rs integration tests (hook / `dcg test` / `dcg explain` runs followed by deny/allow assertions, check_blocked, assert_hook_*, ...)",
        "corpus-toml": "tests/corpus/**/*.toml cases (expected / expected_decision = deny|allow)",
        "shell-e2e": "scripts/e2e_test.sh test_command / test_command_with_packs lines with block|allow",
        "e2e-fixture-txt": "tests/e2e/fixtures/commands/*.txt (dangerous.txt=block, safe.txt=allow, BLOCK:/ALLOW: prefixes)",
        "fixture-yaml": "tests/fixtures/*.yaml pack fixtures, edge cases (false_positives=allow, false_negatives=block) and scenarios (expected_decision); documented expectations that dcg's suite does not evaluate (scenarios are only schema-checked)",
    }

    out = sys.stdout
    w = out.write
    w("# dcg (destructive_command_guard) test corpus: commands its tests expect to be blocked/allowed\n")
    w("# source repository: https://github.com/Dicklesworthstone/destructive_command_guard\n")
    w(f"# commit: {repo.commit} (committed {repo.commit_date})\n")
    w(f"# extracted: {EXTRACT_DATE} by tests/corpora/dcg/extract.py (reads files with `git show <commit>:<path>`)\n")
    w("# columns: expect<TAB>pack<TAB>source<TAB>command\n")
    w("#   expect  block|allow (dcg deny => block)\n")
    w("#   pack    dcg pack id the assertion belongs to ('-' if the test is not pack specific)\n")
    w("#   source  path:line in dcg's repository where the command literal is written\n")
    w("#   command literal command; backslash, tab, CR and newline escaped as \\\\ \\t \\r \\n\n")
    w("# semantics: 'all packs enabled'. Pack unit tests exercise a single pack; a command a pack test\n")
    w("#   says is blocked counts as block. Allow rows from pack tests mean 'this pack allows it'.\n")
    w("# how rows were extracted (only literal strings; format!/concat-built commands skipped):\n")
    for k in kinds:
        w(f"#   {k}: {kind_desc[k]}\n")
    w("# exclusions:\n")
    w("#   - Rust test functions about configuration (allowlists, allow-once, overrides, policies/modes,\n")
    w("#     disabled packs or heredoc scanning, strictness, budgets/deadlines, custom packs, temporary rules):\n")
    w(f"#     {len(rows.excluded_tests)} functions, {rows.skipped.get('rust rows in config-dependent tests', 0)} candidate rows dropped\n")
    w("#   - tests/corpus/edge_cases/future_packs.toml (expects 'allow' only because docker/kubectl packs are off by default)\n")
    w("#   - corpus hook_json protocol cases, WARN fixture lines, warn/log policy shell tests, allowlist shell tests, empty commands\n")
    w("#   - assertions that do not state a decision (assert_no_safe_match, quick-reject/keyword tests, timing, parsing)\n")
    w(f"# de-duplication: identical (expect, command) pairs keep the first occurrence (order: pack-unit, src-unit,\n")
    w("#   rust-integration, corpus-toml, shell-e2e, e2e-fixture-txt, fixture-yaml)\n")
    w(f"# counts: {len(raw)} raw rows -> {len(final)} rows after de-duplication: {nb} block, {na} allow\n")
    w(f"#   commands listed as both block and allow: {len(conflicts)} (see conflicts.txt)\n")
    w("#   per source kind (block/allow after de-dup; raw in parentheses):\n")
    for k in kinds:
        w(f"#     {k:17s} {fin_kind[(k, 'block')]:5d} / {fin_kind[(k, 'allow')]:5d}   ({raw_kind[(k, 'block')]} / {raw_kind[(k, 'allow')]})\n")
    for r in final:
        w(f"{r['expect']}\t{r['pack']}\t{r['source']}\t{esc(r['command'])}\n")

    with open(a.conflicts, "w", encoding="utf-8") as f:
        f.write("# Commands that dcg's tests expect to be blocked in one place and allowed in another.\n")
        f.write(f"# commit {repo.commit}; generated by tests/corpora/dcg/extract.py on {EXTRACT_DATE}.\n")
        f.write("# Typical cause: a pack unit test (single pack) or a default-config test says 'allow' while\n")
        f.write("# another pack, or the full evaluator, blocks the same command.  Format: command, then both rows.\n")
        f.write(f"# count: {len(conflicts)}\n\n")
        for c in conflicts:
            d = by_cmd[c]
            f.write(f"{esc(c)}\n")
            for e in ("block", "allow"):
                r = d[e]
                f.write(f"\t{e}\t{r['pack']}\t{r['source']}\n")
            f.write("\n")

    if a.stats:
        err = sys.stderr
        err.write(f"raw={len(raw)} final={len(final)} block={nb} allow={na} conflicts={len(conflicts)}\n")
        for k in kinds:
            err.write(f"  {k:17s} block={fin_kind[(k, 'block')]:5d} allow={fin_kind[(k, 'allow')]:5d}\n")
        fam = Counter()
        for r in final:
            fam[(r["pack"], r["expect"])] += 1
        packs = Counter()
        for r in final:
            packs[r["pack"]] += 1
        famc = Counter()
        for r in final:
            famc[(r["pack"].split(".")[0], r["expect"])] += 1
        fams = Counter()
        for (f_, _e), n in famc.items():
            fams[f_] += n
        err.write("per pack family (block/allow):\n")
        for f_, _ in fams.most_common(50):
            err.write(f"  {f_:32s} {famc[(f_, 'block')]:5d} {famc[(f_, 'allow')]:5d}\n")
        err.write("per pack (block/allow):\n")
        for p, _ in packs.most_common(50):
            err.write(f"  {p:32s} {fam[(p, 'block')]:5d} {fam[(p, 'allow')]:5d}\n")
        err.write("skipped:\n")
        for k, v in rows.skipped.most_common():
            err.write(f"  {v:5d} {k}\n")


if __name__ == "__main__":
    main()
