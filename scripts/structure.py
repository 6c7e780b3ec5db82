#!/usr/bin/env python3
"""Structural checks for the Rust workspace (stdlib only, no cargo needed).

Usage (from the repository root, or anywhere: paths are taken relative to
the repository that holds this script):

    python3 scripts/structure.py cycles
        Module dependency cycles inside each crate (crates/*/src).
        Exit 1 if any strongly connected component has more than one module.

    python3 scripts/structure.py fn-lengths [--max 80] [--allow FILE]
        Non-test functions whose body spans more than --max lines, longest
        first, as `lines  path:line  name`. Entries listed in FILE, one
        `path::fn_name  # reason` a line, are reported as allowed and do not
        fail (an entry covers every fn of that name in that file; entries
        that match nothing too long are listed as not needed). Exit 1 if any
        other function is too long.

Both checks read the sources as text. A small lexer first blanks comments
(including `///` and `//!` doc comments), string literals (plain, byte, C and
raw strings) and char literals, keeping every newline so that line numbers
survive; test-only items (`#[cfg(test)]`, `#[test]`) are then blanked the same
way. Everything else works on that cleaned text.
"""

import argparse
import bisect
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --------------------------------------------------------------------------
# Lexing: blank comments and literals
# --------------------------------------------------------------------------

# Raw strings: r"..", r#".."#, br#".."#, cr".." (any number of `#`). A raw
# identifier such as `r#type` has no quote after the hashes and is left alone.
RAW_STRING_RE = re.compile(r'(?:br|cr|r)(#*)"')


def _is_ident_char(ch):
    return ch.isalnum() or ch == "_"


def clean(src):
    """Return `src` with comments, strings and char literals replaced by
    spaces. Newlines are kept, so offsets and line numbers are unchanged.

    Char literal versus lifetime: after a `'`, a backslash means an escaped
    char literal ('\\n', '\\'', '\\u{..}'); a single char followed by `'`
    is a plain char literal ('x', '{'); anything else ('a in `&'a str`, loop
    labels) is a lifetime or label and only the quote is skipped.
    """
    out = list(src)
    n = len(src)

    def blank(a, b):
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    i = 0
    while i < n:
        c = src[i]
        if c == "/" and src.startswith("//", i):
            # Line comment, doc comment (`///`, `//!`): up to the newline.
            j = src.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif c == "/" and src.startswith("/*", i):
            # Block comments nest in Rust.
            depth, j = 0, i
            while j < n:
                if src.startswith("/*", j):
                    depth += 1
                    j += 2
                elif src.startswith("*/", j):
                    depth -= 1
                    j += 2
                    if depth == 0:
                        break
                else:
                    j += 1
            blank(i, j)
            i = j
        elif c in "rbc" and (i == 0 or not _is_ident_char(src[i - 1])) and RAW_STRING_RE.match(src, i):
            m = RAW_STRING_RE.match(src, i)
            close = '"' + m.group(1)
            j = src.find(close, m.end())
            j = n if j < 0 else j + len(close)
            blank(i, j)
            i = j
        elif c == '"':
            # Plain, byte (b"..") or C (c"..") string: the prefix letter is
            # left as an identifier char, which is harmless.
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            j = min(j + 1, n)
            blank(i, j)
            i = j
        elif c == "'":
            if i + 1 < n and src[i + 1] == "\\":
                # Escaped char: skip the escaped char, then find the quote.
                j = src.find("'", i + 3)
                j = n if j < 0 else j + 1
                blank(i, j)
                i = j
            elif i + 2 < n and src[i + 2] == "'" and src[i + 1] != "\n":
                blank(i, i + 3)
                i += 3
            else:
                i += 1  # lifetime or loop label
        else:
            i += 1
    return "".join(out)


def line_starts(text):
    starts = [0]
    for m in re.finditer("\n", text):
        starts.append(m.end())
    return starts


def line_at(starts, pos):
    """1-based line number of offset `pos`."""
    return bisect.bisect_right(starts, pos)


def match_brace(text, pos):
    """Offset of the `}` closing the `{` at `pos` (cleaned text only)."""
    depth = 0
    for j in range(pos, len(text)):
        ch = text[j]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(text) - 1


def item_end(text, pos):
    """End offset (exclusive) of the item starting at `pos`: the first `;`
    outside () and [] (`mod tests;`, `struct S(u8);`, `const X: [u8; 2] = ..;`)
    or the `}` closing the first `{` outside () and [] (`mod tests { .. }`,
    `fn f() { .. }`, `impl X { .. }`)."""
    depth = 0
    for j in range(pos, len(text)):
        ch = text[j]
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0 and ch == ";":
            return j + 1
        elif depth == 0 and ch == "{":
            return match_brace(text, j) + 1
    return len(text)


# --------------------------------------------------------------------------
# Test code
# --------------------------------------------------------------------------

# Outer attributes that make an item test-only: #[cfg(<pred>)] with a test
# predicate, #[test], #[tokio::test].
TEST_ATTR_RE = re.compile(r"#\s*\[\s*(?:cfg\s*\((.*?)\)|test|tokio\s*::\s*test)\s*\]", re.S)
# An inner #![cfg(test)] makes the whole file test-only.
INNER_TEST_RE = re.compile(r"#\s*!\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]")
ATTR_START_RE = re.compile(r"\s*#\s*\[")
MOD_DECL_RE = re.compile(r"\bmod\s+(?:r#)?([A-Za-z_]\w*)\s*;")


def is_test_predicate(pred):
    """`test`, or `all(..)` that requires `test` (and has no not/any, which
    could make it true outside tests). Deliberately conservative."""
    if pred is None:
        return True  # #[test] / #[tokio::test]
    words = re.findall(r"\w+", pred)
    if words == ["test"]:
        return True
    return bool(words) and words[0] == "all" and "test" in words and "not" not in words and "any" not in words


def strip_tests(text):
    """Blank every test-only item of cleaned `text`. Returns the new text and
    the names of `mod x;` declarations that were test-only (their files are
    test code too). A file with #![cfg(test)] becomes entirely blank."""
    if INNER_TEST_RE.search(text):
        return re.sub(r"[^\n]", " ", text), []
    out = list(text)
    gated_mods = []
    pos = 0
    while True:
        m = TEST_ATTR_RE.search(text, pos)
        if not m:
            break
        if not is_test_predicate(m.group(1)):
            pos = m.end()
            continue
        # Skip any further attributes, then take the item itself.
        j = m.end()
        while True:
            a = ATTR_START_RE.match(text, j)
            if not a:
                break
            j = a.end()
            depth = 1
            while j < len(text) and depth:
                depth += {"[": 1, "]": -1}.get(text[j], 0)
                j += 1
        end = item_end(text, j)
        decl = MOD_DECL_RE.search(text, j, end)
        if decl and decl.end() == end:
            gated_mods.append(decl.group(1))
        for k in range(m.start(), end):
            if out[k] != "\n":
                out[k] = " "
        pos = end
    return "".join(out), gated_mods


def load(path):
    """Read a file and return its cleaned, test-stripped text plus the names
    of its test-only `mod x;` declarations."""
    with open(path, encoding="utf-8", errors="replace") as f:
        src = f.read()
    return strip_tests(clean(src))


def child_files(path, name):
    """Candidate files for `mod name;` declared in `path`: next to a
    mod.rs/lib.rs/main.rs, or in the directory named after any other file
    (checks/ssrf.rs -> checks/ssrf/name.rs). #[path] attributes are not
    supported (the workspace has none)."""
    base = os.path.dirname(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    if stem not in ("mod", "lib", "main"):
        base = os.path.join(base, stem)
    return [os.path.join(base, name + ".rs"), os.path.join(base, name, "mod.rs")]


def root_dir(path):
    """The crate's src directory, for a file somewhere under it."""
    head = path
    while os.path.basename(head) != "src" and os.path.dirname(head) != head:
        head = os.path.dirname(head)
    return head if os.path.basename(head) == "src" else os.path.dirname(path)


def rel(path):
    return os.path.relpath(path, ROOT)


# --------------------------------------------------------------------------
# cycles
# --------------------------------------------------------------------------
#
# Rule for edges (module A -> module B), kept deliberately simple:
#
# * Only paths that start with `crate::`, `super::` (any number) or `self::`
#   are looked at; a bare path (`lex::Word`) always names something inside A
#   or outside the crate. `use` trees are expanded (`use crate::{a::X, b::{c,
#   d}}` gives three paths).
# * A path resolves to the LONGEST existing module prefix:
#   `crate::checks::shell::analyze` -> `checks::shell`.
# * Target = crate root: not counted (the root only re-exports).
# * Target = A itself or a descendant of A: not counted (a parent using its
#   child is plain containment, not a dependency to worry about).
# * Target = an ancestor of A (`super::Foo`, `crate::policy::Foo` from
#   `policy::read`): counted only when `Foo` is an item DEFINED in the
#   ancestor's own file. If the ancestor merely imports it (`pub use
#   lex::Word;` in checks/shell/mod.rs), the import is followed and the edge
#   goes to where it comes from (`checks::shell::effects` -> `lex`), with the
#   same rules. Globs and unknown names through an ancestor are dropped.
# * Any other target (sibling, cousin, ...) is counted as is.
#
# Containment edges (parent -> child) are never added, so every cycle is
# made of real references: `policy` -> `checks::shell` (use
# crate::checks::shell) with `checks::shell` -> `policy` (use
# crate::policy::CommandRule); siblings `policy::read` <->
# `policy::read_breakers`. A child using its parent's items can only be in
# a cycle through some third module that the parent does not contain.
#
# Strongly connected components of more than one module are the cycles.

REF_RE = re.compile(r"(?<![\w:])(crate|super|self)\s*::")
USE_RE = re.compile(r"\buse\s+(?:::)?")
INLINE_MOD_RE = re.compile(r"\bmod\s+(?:r#)?\w+\s*\{")
DEF_RE = re.compile(r"\b(?:fn|struct|enum|trait|type|const|static|union|mod)\s+(?:mut\s+)?(?:r#)?([A-Za-z_]\w*)")
MACRO_DEF_RE = re.compile(r"\bmacro_rules\s*!\s*([A-Za-z_]\w*)")
TOKEN_RE = re.compile(r"\s*(::|[A-Za-z_]\w*|\S)", re.S)


def _token(text, pos):
    """(token, token offset, offset after it); token None at the end."""
    m = TOKEN_RE.match(text, pos)
    if not m:
        return None, len(text), len(text)
    return m.group(1), m.start(1), m.end()


def parse_tree(text, pos, prefix=()):
    """Parse a path or `use` tree starting at `pos`. Returns
    ([(segments, offset of last segment, alias or None)], end offset).
    `a::{self, b}` gives `a` and `a::b`; `a::*` keeps `*` as last segment."""
    segs = list(prefix)
    last = pos
    while True:
        tok, tpos, after = _token(text, pos)
        if tok == "{":
            results = []
            pos = after
            while True:
                tok, tpos, after = _token(text, pos)
                if tok == "}":
                    return results, after
                if tok == ",":
                    pos = after
                elif tok is not None and (tok in ("{", "*") or _is_ident_char(tok[0])):
                    sub, pos = parse_tree(text, pos, segs)
                    results.extend(sub)
                else:
                    return results, pos  # malformed: stop quietly
        if tok == "*":
            return [(segs + ["*"], tpos, None)], after
        if tok is None or not _is_ident_char(tok[0]):
            return ([(segs, last, None)] if len(segs) > len(prefix) else []), pos
        # `self` inside a group names the group's prefix itself.
        if not (tok == "self" and segs):
            segs.append(tok)
        last, pos = tpos, after
        nxt, _, after = _token(text, pos)
        if nxt == "::":
            pos = after
            continue
        alias = None
        if nxt == "as":
            alias, _, pos = _token(text, after)
        return [(segs, last, alias)], pos


class Crate:
    """One crate target (a lib.rs or main.rs root) and its modules."""

    def __init__(self, name, root_file):
        self.name = name
        self.modules = {}  # module tuple -> (file, stripped cleaned text)
        self._defs = {}  # module -> names of items defined in its file
        self._uses = {}  # module -> {imported name: path segments}
        self._discover((), root_file)

    def _discover(self, mod, path):
        text, _ = load(path)
        self.modules[mod] = (path, text)
        for m in MOD_DECL_RE.finditer(text):
            name = m.group(1)
            if name == "tests":
                continue  # a `mod tests;` without #[cfg(test)] is still tests
            files = [f for f in child_files(path, name) if os.path.isfile(f)]
            if not files:
                print(f"warning: {rel(path)}: no file for `mod {name};`", file=sys.stderr)
                continue
            # Files named tests.rs and anything in a `tests` directory are
            # test code (the declaration is usually cfg(test)-gated anyway).
            parts = os.path.relpath(files[0], root_dir(path)).split(os.sep)
            if os.path.basename(files[0]) == "tests.rs" or "tests" in parts[:-1]:
                continue
            self._discover(mod + (name,), files[0])

    # -- per-module item tables (only needed for ancestors) --------------

    def defs(self, mod):
        """Names of items defined in the module's own file."""
        if mod not in self._defs:
            text = self.modules[mod][1]
            self._defs[mod] = set(DEF_RE.findall(text)) | set(MACRO_DEF_RE.findall(text))
        return self._defs[mod]

    def uses(self, mod):
        """name -> imported path segments for the module's `use` items."""
        if mod not in self._uses:
            table = {}
            text = self.modules[mod][1]
            for m in USE_RE.finditer(text):
                for segs, _, alias in parse_tree(text, m.end())[0]:
                    if segs and segs[-1] != "*":
                        table[alias or segs[-1]] = segs
            self._uses[mod] = table
        return self._uses[mod]

    # -- resolution ------------------------------------------------------

    def absolute(self, mod, segs, inline_depth=0):
        """Absolute segments of a path written in module `mod`, or None when
        it leaves the crate. `inline_depth` = number of inline `mod x {}`
        blocks around the reference: their content counts as `mod`, so the
        first `super`s only step out of them."""
        first = segs[0]
        if first == "crate":
            return tuple(segs[1:])
        if first == "self":
            return tuple(mod) + tuple(segs[1:])
        if first == "super":
            base, rest = tuple(mod), list(segs)
            while rest and rest[0] == "super":
                if inline_depth:
                    inline_depth -= 1
                elif not base:
                    return None
                else:
                    base = base[:-1]
                rest.pop(0)
            return base + tuple(rest)
        if tuple(mod) + (first,) in self.modules:
            return tuple(mod) + tuple(segs)  # bare path to a child module
        return None  # extern crate, std, local item

    def longest_prefix(self, path):
        for k in range(len(path), -1, -1):
            if path[:k] in self.modules:
                return path[:k], path[k:]
        return (), path

    def target(self, mod, path, hops=0):
        """The module `mod` depends on through absolute `path`, or None.
        Implements the rule described above."""
        if path is None or hops > 8:
            return None
        tgt, rest = self.longest_prefix(path)
        if tgt == ():
            return None  # crate root: re-exports only
        if tgt[: len(mod)] == mod:
            return None  # itself or a descendant
        if mod[: len(tgt)] == tgt:  # an ancestor
            if not rest or rest[0] == "*":
                return None
            if rest[0] in self.defs(tgt):
                return tgt
            imported = self.uses(tgt).get(rest[0])
            source = self.absolute(tgt, imported) if imported else None
            if source is None:
                return None  # glob, extern or unknown name: cannot tell
            return self.target(mod, source + tuple(rest[1:]), hops + 1)
        return tgt

    def edges(self):
        """{(from, to): [(file, line), ...]}"""
        result = {}
        for mod, (path, text) in self.modules.items():
            starts = line_starts(text)
            inline = [(m.start(), match_brace(text, m.end() - 1)) for m in INLINE_MOD_RE.finditer(text)]
            pos = 0
            while True:
                m = REF_RE.search(text, pos)
                if not m:
                    break
                depth = sum(1 for a, b in inline if a < m.start() < b)
                leaves, pos = parse_tree(text, m.start())
                pos = max(pos, m.end())
                for segs, leaf_pos, _ in leaves:
                    tgt = self.target(mod, self.absolute(mod, segs, depth))
                    if tgt is not None:
                        result.setdefault((mod, tgt), []).append((rel(path), line_at(starts, leaf_pos)))
        return result


def tarjan(nodes, succ):
    """Strongly connected components (iterative Tarjan)."""
    index, low, on_stack, stack, comps = {}, {}, set(), [], []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(succ.get(root, ())))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(succ.get(w, ()))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                comps.append(comp)
    return comps


def modname(mod):
    return "::".join(mod) if mod else "crate"


def crate_targets():
    """(display name, root file) for every crates/*/src/{lib,main}.rs.
    src/bin/* roots are skipped."""
    out = []
    crates_dir = os.path.join(ROOT, "crates")
    for name in sorted(os.listdir(crates_dir)):
        for root in ("lib.rs", "main.rs"):
            f = os.path.join(crates_dir, name, "src", root)
            if os.path.isfile(f):
                out.append((name if root == "lib.rs" else f"{name} (bin src/main.rs)", f))
    return out


def cmd_cycles(_args):
    targets = crate_targets()
    crate_dirs = {os.path.dirname(os.path.dirname(f)) for _, f in targets}
    n_mods = n_edges = 0
    found = False
    for name, root in targets:
        crate = Crate(name, root)
        edges = crate.edges()
        n_mods += len(crate.modules)
        n_edges += len(edges)
        succ = {}
        for a, b in edges:
            succ.setdefault(a, []).append(b)
        comps = [sorted(c) for c in tarjan(sorted(crate.modules), succ) if len(c) > 1]
        if not comps:
            continue
        found = True
        print(f"crate {name}:")
        for comp in sorted(comps):
            members = set(comp)
            print(f"  cycle: {' <-> '.join(modname(m) for m in comp)}")
            for (a, b), refs in sorted(edges.items()):
                if a in members and b in members:
                    refs = sorted(set(refs))
                    more = f" (+{len(refs) - 1} more)" if len(refs) > 1 else ""
                    print(f"    {modname(a)} -> {modname(b)}    {refs[0][0]}:{refs[0][1]}{more}")
        print()
    if found:
        return 1
    print(f"no module cycles in {len(crate_dirs)} crates ({n_mods} modules, {n_edges} edges)")
    return 0


# --------------------------------------------------------------------------
# fn-lengths
# --------------------------------------------------------------------------

FN_RE = re.compile(r"\bfn\s+(?:r#)?([A-Za-z_]\w*)")
# Directories that hold only test, benchmark, example or fuzz code (and
# build output).
SKIP_DIRS = {"target", "tests", "benches", "examples", "fuzz", "node_modules"}
SKIP_FILES = {"tests.rs", "build.rs"}


def rust_files():
    """Non-test .rs files of the repository, with their stripped text."""
    files = {}
    test_files = set()
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for fn in sorted(filenames):
            if not fn.endswith(".rs") or fn in SKIP_FILES:
                continue
            path = os.path.join(dirpath, fn)
            text, gated = load(path)
            files[path] = text
            # `#[cfg(test)] mod helpers;` -> helpers.rs is test code as well.
            for name in gated:
                test_files.update(child_files(path, name))
    return {p: t for p, t in files.items() if p not in test_files}


def functions(text):
    """(name, first line, last line) of every fn with a body. Nested fns
    are found on their own, and are also part of the enclosing fn's span."""
    starts = line_starts(text)
    for m in FN_RE.finditer(text):
        end = item_end(text, m.end())
        if text[end - 1] == "}":  # a declaration without a body (trait method) ends in `;`
            yield m.group(1), line_at(starts, m.start()), line_at(starts, end - 1)


def read_allow(path):
    """{(relative path, fn name): reason} from `path::fn_name  # reason`."""
    allow = {}
    with open(path, encoding="utf-8") as f:
        for raw in f:
            entry, _, reason = raw.partition("#")
            entry = entry.strip()
            if not entry:
                continue
            file_part, sep, fn_name = entry.rpartition("::")
            if not sep:
                print(f"warning: {path}: ignoring `{raw.strip()}` (want path::fn_name)", file=sys.stderr)
                continue
            allow[(os.path.normpath(file_part), fn_name)] = reason.strip()
    return allow


def cmd_fn_lengths(args):
    allow = read_allow(args.allow) if args.allow else {}
    long_fns, allowed = [], []
    used = set()
    for path, text in sorted(rust_files().items()):
        r = rel(path)
        for name, first, last in functions(text):
            n = last - first + 1
            if n <= args.max:
                continue
            row = (n, f"{r}:{first}", name)
            key = (os.path.normpath(r), name)
            if key in allow:
                used.add(key)
                allowed.append(row + (allow[key],))
            else:
                long_fns.append(row)
    long_fns.sort(key=lambda x: (-x[0], x[1]))
    allowed.sort(key=lambda x: (-x[0], x[1]))
    width = max([len(r[1]) for r in long_fns + allowed] or [0])
    print(f"functions longer than {args.max} lines: {len(long_fns)}")
    for n, loc, name in long_fns:
        print(f"{n:6}  {loc:<{width}}  {name}")
    if allowed:
        print(f"\nallowed (tables): {len(allowed)}")
        for n, loc, name, reason in allowed:
            print(f"{n:6}  {loc:<{width}}  {name}" + (f"  # {reason}" if reason else ""))
    stale = sorted(set(allow) - used)
    if stale:
        print(f"\nallow entries not needed (missing or not over {args.max} lines):")
        for p, name in stale:
            print(f"        {p}::{name}")
    return 1 if long_fns else 0


def main():
    parser = argparse.ArgumentParser(description="Structural checks for the Rust workspace.")
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("cycles", help="module dependency cycles inside each crate")
    fl = sub.add_parser("fn-lengths", help="functions longer than --max lines")
    fl.add_argument("--max", type=int, default=80, help="longest allowed body, in lines (default 80)")
    fl.add_argument("--allow", metavar="FILE", help="allow-list of `path::fn_name  # reason` lines")
    args = parser.parse_args()
    return cmd_cycles(args) if args.cmd == "cycles" else cmd_fn_lengths(args)


if __name__ == "__main__":
    sys.exit(main())
