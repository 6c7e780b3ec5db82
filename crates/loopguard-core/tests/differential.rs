//! Differential test: write-shaped commands are run for real by bash under `strace -f` in a
//! throwaway directory; every path the processes actually created, changed or deleted must be
//! predicted by the analyser (equal to, or below, a predicted target). Needs strace (installed
//! by .ci/run where missing).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;
use loopguard_core::Context;
use loopguard_core::checks::paths::PathValidator;
use loopguard_core::checks::paths::resolve;
use loopguard_core::checks::shell::{Knowledge, analyze};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn setup(dir: &Path) {
    std::fs::create_dir_all(dir.join("src/deep")).unwrap();
    std::fs::create_dir_all(dir.join("empty")).unwrap();
    std::fs::create_dir_all(dir.join("extract")).unwrap();
    std::fs::write(dir.join("a.txt"), "a\n").unwrap();
    std::fs::write(dir.join("b.txt"), "b\n").unwrap();
    std::fs::write(dir.join("src/lib.rs"), "fn a() {}\n").unwrap();
    std::fs::write(dir.join("src/old.rs"), "old\n").unwrap();
    std::fs::write(dir.join("src/deep/x.rs"), "x\n").unwrap();
    let st = Command::new("tar").args(["-cf", "archive.tar", "src"]).current_dir(dir).status().unwrap();
    assert!(st.success());
}

/// Splits a syscall's argument text at top-level commas (not inside quotes, braces or brackets).
fn split_args(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i32;
    let mut quoted = false;
    let mut escaped = false;
    for c in args.chars() {
        if quoted {
            cur.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                quoted = false;
            }
            continue;
        }
        match c {
            '"' => {
                quoted = true;
                cur.push(c);
            }
            '{' | '[' | '(' => {
                depth += 1;
                cur.push(c);
            }
            '}' | ']' | ')' => {
                depth -= 1;
                cur.push(c);
            }
            ',' if depth == 0 => out.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(c),
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// The text of a quoted strace string argument, if it is one.
fn unquote(arg: &str) -> Option<String> {
    let inner = arg.strip_prefix('"')?;
    let inner = inner.strip_suffix("\"...").or_else(|| inner.strip_suffix('"'))?;
    let mut s = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => s.push('\n'),
                Some('t') => s.push('\t'),
                Some(o) => s.push(o),
                None => {}
            }
        } else {
            s.push(c);
        }
    }
    Some(s)
}

fn writes_flags(f: &str) -> bool {
    f.contains("O_WRONLY") || f.contains("O_RDWR") || f.contains("O_CREAT") || f.contains("O_TRUNC")
}

/// A directory fd argument decoded by `-y` (`3</abs/dir>`); `None` for AT_FDCWD.
fn dirfd(arg: &str) -> Option<PathBuf> {
    let (a, b) = (arg.find('<')?, arg.rfind('>')?);
    (b > a).then(|| PathBuf::from(&arg[a + 1..b]))
}

/// One traced event of one process.
enum Event {
    Chdir(String),
    Spawn(String),
    Write { call: String, path: String, base: Option<PathBuf> },
}

/// Paths written by the traced processes: parses `strace -f -y` output, merging
/// unfinished/resumed lines, then resolves relative paths against each process's cwd, which
/// follows chdir and is inherited at fork (in the parent's own order, whatever the interleaving).
fn written_paths(trace: &str, start: &Path) -> Vec<(PathBuf, String)> {
    let mut pending: HashMap<String, String> = HashMap::new();
    let mut events: Vec<(String, Event)> = Vec::new();
    let mut first_pid: Option<String> = None;
    for raw in trace.lines() {
        let Some((pid, rest)) = raw.split_once(' ') else { continue };
        let rest = rest.trim_start();
        let line = if let Some(head) = rest.strip_suffix(" <unfinished ...>") {
            pending.insert(pid.to_string(), head.to_string());
            continue;
        } else if rest.starts_with("<... ") {
            let tail = rest.split_once("resumed>").map_or("", |(_, t)| t);
            format!("{}{}", pending.remove(pid).unwrap_or_default(), tail)
        } else {
            rest.to_string()
        };
        first_pid.get_or_insert_with(|| pid.to_string());
        let Some((name, args_ret)) = line.split_once('(') else { continue };
        // strace pads short lines: `rename("a", "b")    = 0`.
        let Some((args, ret)) = args_ret.rsplit_once(" = ") else { continue };
        let Some(args) = args.trim_end().strip_suffix(')') else { continue };
        let ret = ret.trim().split(' ').next().unwrap_or("");
        if ret.starts_with('-') || ret == "?" {
            continue;
        }
        let a = split_args(args);
        let path_at = |i: usize| a.get(i).and_then(|x| unquote(x));
        let fd_at = |i: usize| a.get(i).and_then(|x| dirfd(x));
        let mut write = |path: Option<String>, base: Option<PathBuf>| {
            if let Some(path) = path.filter(|p| !p.is_empty()) {
                events.push((pid.to_string(), Event::Write { call: name.to_string(), path, base }));
            }
        };
        match name {
            "clone" | "clone3" | "fork" | "vfork" => events.push((pid.to_string(), Event::Spawn(ret.to_string()))),
            "chdir" => {
                if let Some(p) = path_at(0) {
                    events.push((pid.to_string(), Event::Chdir(p)));
                }
            }
            "fchdir" => {
                if let Some(p) = fd_at(0) {
                    events.push((pid.to_string(), Event::Chdir(p.to_string_lossy().into_owned())));
                }
            }
            "open" | "creat" | "truncate" | "chmod" | "chown" | "lchown" | "mkdir" | "rmdir" | "unlink" | "mknod" => {
                let wr = name != "open"
                    || a.get(1).is_some_and(|f| {
                        f.contains("O_WRONLY") || f.contains("O_RDWR") || f.contains("O_CREAT") || f.contains("O_TRUNC")
                    });
                if wr {
                    write(path_at(0), None);
                }
            }
            "openat" if a.get(2).is_some_and(|f| writes_flags(f)) => write(path_at(1), fd_at(0)),
            "unlinkat" | "mkdirat" | "fchmodat" | "fchmodat2" | "fchownat" | "utimensat" | "mknodat" => {
                write(path_at(1), fd_at(0))
            }
            "rename" | "link" => {
                if name == "rename" {
                    write(path_at(0), None);
                }
                write(path_at(1), None);
            }
            "symlink" => write(path_at(1), None),
            "symlinkat" => write(path_at(2), fd_at(1)),
            "renameat" | "renameat2" => {
                write(path_at(1), fd_at(0));
                write(path_at(3), fd_at(2));
            }
            "linkat" => write(path_at(3), fd_at(2)),
            _ => {}
        }
    }
    // Each process's events in its own order; a child starts in its parent's cwd at the spawn.
    let mut start_cwd: HashMap<String, PathBuf> = HashMap::new();
    if let Some(p) = &first_pid {
        start_cwd.insert(p.clone(), start.to_path_buf());
    }
    let mut out = Vec::new();
    // Resolve in rounds: a process can be resolved once its start cwd is known.
    let pids: Vec<String> = {
        let mut v: Vec<String> = events.iter().map(|(p, _)| p.clone()).collect();
        v.dedup();
        let mut seen = std::collections::HashSet::new();
        v.retain(|p| seen.insert(p.clone()));
        v
    };
    let mut done = std::collections::HashSet::new();
    for _ in 0..pids.len() + 1 {
        for pid in &pids {
            if done.contains(pid) {
                continue;
            }
            let Some(mut here) = start_cwd.get(pid).cloned() else { continue };
            for (p, ev) in events.iter().filter(|(p, _)| p == pid) {
                let _ = p;
                match ev {
                    Event::Chdir(d) => here = here.join(d),
                    Event::Spawn(child) => {
                        start_cwd.insert(child.clone(), here.clone());
                    }
                    Event::Write { call, path, base } => {
                        out.push((base.clone().unwrap_or_else(|| here.clone()).join(path), call.clone()));
                    }
                }
            }
            done.insert(pid.clone());
        }
    }
    out
}

#[test]
fn every_write_bash_performs_was_predicted() {
    if Command::new("strace").arg("-V").output().is_err() {
        panic!("strace is required for this test (apt-get install strace)");
    }
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/differential.txt")).unwrap();
    let mut failures = Vec::new();
    let mut checked = 0;
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let cmd = line.replace("\\n", "\n");
        let root = tempfile::tempdir().unwrap();
        let dir = resolve(&root.path().join("ws"), Path::new("/")).unwrap();
        let tmp = root.path().join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        setup(&dir);
        let ctx = Context::new(&dir).with_worktree(common::worktree()).with_home(Some(&root.path().join("home")));
        let report = analyze(&cmd, &dir, &ctx, Knowledge::builtin(), &PathValidator::new([dir.as_path()]));
        // Targets the analyser cannot know (`$f`) are asked about instead of predicted.
        let unknown_targets = report.findings.iter().any(|f| f.code == "shell-dynamic-command");
        let predicted = report.predicted_writes.clone();
        let trace_file = root.path().join("trace");
        let status = Command::new("strace")
            .args(["-f", "-y", "-qq", "-s", "4096", "-o"])
            .arg(&trace_file)
            .args(["bash", "-c", &cmd])
            .current_dir(&dir)
            .env("TMPDIR", &tmp)
            .env("HOME", root.path().join("home"))
            .output()
            .unwrap();
        let trace = std::fs::read_to_string(&trace_file).unwrap_or_default();
        if !status.status.success() {
            failures.push(format!("`{line}`: bash failed: {}", String::from_utf8_lossy(&status.stderr)));
            continue;
        }
        checked += 1;
        // Temp files renamed onto a predicted target (sed -i, install) are part of that write.
        let writes = written_paths(&trace, &dir);
        let renamed_onto: Vec<(PathBuf, PathBuf)> = {
            let mut v = Vec::new();
            let mut last_src: Option<PathBuf> = None;
            for (p, call) in &writes {
                if call.starts_with("rename") {
                    match last_src.take() {
                        None => last_src = Some(p.clone()),
                        Some(src) => v.push((src, p.clone())),
                    }
                }
            }
            v
        };
        let covered =
            |p: &Path| predicted.iter().any(|t| p.starts_with(t) || (t.starts_with(p) && p.starts_with(&dir)));
        // Renames chain (shred renames its file through several names): close over them.
        let mut renamed: Vec<PathBuf> = Vec::new();
        loop {
            let before = renamed.len();
            for (src, dst) in &renamed_onto {
                let (src, dst) = (normalize(src), normalize(dst));
                let src_linked = covered(&src) || renamed.contains(&src);
                let dst_linked = covered(&dst) || renamed.contains(&dst);
                if src_linked && !renamed.contains(&dst) {
                    renamed.push(dst.clone());
                }
                if dst_linked && !renamed.contains(&src) {
                    renamed.push(src.clone());
                }
            }
            if renamed.len() == before {
                break;
            }
        }
        for (p, call) in &writes {
            let p = normalize(p);
            if !p.starts_with(&dir) || p.starts_with(&tmp) || p.starts_with("/dev") || p.starts_with("/proc") {
                if !p.starts_with(&tmp) && !p.starts_with("/dev") && !p.starts_with("/proc") {
                    failures.push(format!("`{line}`: wrote outside the directory: {} ({call})", p.display()));
                }
                continue;
            }
            // A temp file renamed onto a predicted target (sed -i), or a predicted target renamed
            // away before it is deleted (shred -u), is part of that predicted write.
            let via_rename = renamed.contains(&p);
            if !covered(&p) && !via_rename && !unknown_targets {
                failures.push(format!(
                    "`{line}`: {call} {} was not predicted (predicted: {:?})",
                    p.strip_prefix(&dir).unwrap_or(&p).display(),
                    predicted
                        .iter()
                        .map(|t| t.strip_prefix(&dir).unwrap_or(t).display().to_string())
                        .collect::<Vec<_>>()
                ));
            }
        }
    }
    assert!(checked >= 40, "only {checked} commands ran");
    assert!(failures.is_empty(), "{} problems:\n{}", failures.len(), failures.join("\n"));
}

fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}
