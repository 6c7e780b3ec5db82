//! Real development work keeps working under the default sandbox profile: `cargo build`, `npm ci`
//! from a local tarball, `pytest` and `go test`, each asked of the real hook and run exactly as it
//! answers (wrapped in `loopguard exec`), inside a loopback-only network namespace, with a
//! throwaway HOME whose caches the builds may write.
//!
//! pytest and Go are unpacked into target/e2e-tools by scripts/test.sh. Missing tools fail the
//! test; LOOPGUARD_SKIP_E2E=1 skips it knowingly.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::path::PathBuf;
use std::process::Command;

mod common;
use common::{repo_root, write};

struct Place {
    _root: tempfile::TempDir,
    home: PathBuf,
    ws: PathBuf,
    state: PathBuf,
    path: String,
    extra_env: Vec<(String, String)>,
}

fn place() -> Place {
    let root = tempfile::tempdir().unwrap();
    let base = root.path().canonicalize().unwrap();
    let home = base.join("home");
    let ws = home.join("project");
    for d in [".cache", ".npm"] {
        std::fs::create_dir_all(home.join(d)).unwrap();
    }
    std::fs::create_dir_all(&ws).unwrap();
    assert!(Command::new("git").args(["init", "-q"]).current_dir(&ws).status().unwrap().success());
    let tools = repo_root().join("target/e2e-tools");
    let go = tools.join("go/usr/lib/go-1.19/bin");
    let path = format!("{}:{}", go.display(), std::env::var("PATH").unwrap_or_default());
    // cargo and rustc through rustup need its homes (read only: nothing is downloaded).
    let rustup_home = std::env::var("RUSTUP_HOME").unwrap_or_else(|_| format!("{}/.rustup", real_home()));
    let cargo_home = std::env::var("CARGO_HOME").unwrap_or_else(|_| format!("{}/.cargo", real_home()));
    let extra_env = vec![
        ("RUSTUP_HOME".into(), rustup_home),
        ("CARGO_HOME".into(), cargo_home),
        ("PYTHONPATH".into(), tools.join("py").display().to_string()),
        ("GOFLAGS".into(), "-mod=mod".into()),
        ("GOPROXY".into(), "off".into()),
        ("CARGO_TARGET_DIR".into(), ws.join("target").display().to_string()),
    ];
    Place { state: base.join("state"), _root: root, home, ws, path, extra_env }
}

fn real_home() -> String {
    std::env::var("HOME").unwrap_or_else(|_| "/root".into())
}

fn skip() -> bool {
    std::env::var_os("LOOPGUARD_SKIP_E2E").is_some()
}

/// Asks the real hook about `cmd` (unattended) and runs what it answers, in a loopback-only
/// network namespace. Returns (exit success, output).
fn build(p: &Place, cmd: &str) -> (bool, String) {
    use std::io::Write;
    let ev = serde_json::json!({
        "session_id": "builds", "transcript_path": p.state.join("t.jsonl"), "cwd": p.ws,
        "permission_mode": "bypassPermissions", "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": cmd}, "tool_use_id": "t"
    });
    let mut hook = Command::new(env!("CARGO_BIN_EXE_loopguard"))
        .args(["hook", "claude-code", "--deadline-ms", "60000"])
        .env_clear()
        .env("PATH", &p.path)
        .env("HOME", &p.home)
        .env("LOOPGUARD_HOME", &p.state)
        .env("LOOPGUARD_EFFECTS", "manual")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    hook.stdin.take().unwrap().write_all(ev.to_string().as_bytes()).unwrap();
    let answer = String::from_utf8_lossy(&hook.wait_with_output().unwrap().stdout).into_owned();
    let v: serde_json::Value = serde_json::from_str(answer.trim()).unwrap_or_else(|e| panic!("{e}: {answer}"));
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "allow", "{cmd}: {answer}");
    let wrapped = v["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap_or_else(|| panic!("{cmd} was allowed but not wrapped in the sandbox: {answer}"))
        .to_string();
    assert!(wrapped.contains(" exec --profile workspace-write"), "{wrapped}");
    let out = Command::new("unshare")
        .args(["-rn", "bash", "-c", &format!("ip link set lo up; {wrapped}")])
        .env_clear()
        .env("PATH", &p.path)
        .env("HOME", &p.home)
        .env("LOOPGUARD_HOME", &p.state)
        .envs(p.extra_env.iter().map(|(k, v)| (k, v)))
        .current_dir(&p.ws)
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

#[test]
fn cargo_build_runs_in_the_default_sandbox() {
    if skip() {
        return;
    }
    let p = place();
    write(&p.ws.join("Cargo.toml"), "[package]\nname = \"hello\"\nversion = \"0.1.0\"\nedition = \"2021\"\n");
    write(&p.ws.join("src/main.rs"), "fn main() { println!(\"hello from the sandbox\"); }\n");
    let (ok, out) = build(&p, "cargo build --offline && ./target/debug/hello");
    assert!(ok, "{out}");
    assert!(out.contains("hello from the sandbox"), "{out}");
}

#[test]
fn npm_ci_from_a_local_tarball_runs_in_the_default_sandbox() {
    if skip() {
        return;
    }
    let p = place();
    // A dependency packed locally (no registry): `npm pack` outside, `npm ci` inside.
    write(
        &p.ws.join("vendor/greet/package.json"),
        "{\"name\": \"greet\", \"version\": \"1.0.0\", \"main\": \"index.js\"}\n",
    );
    write(&p.ws.join("vendor/greet/index.js"), "module.exports = () => 'hello from greet';\n");
    let pack = Command::new("npm")
        .args(["pack", "--silent", "--pack-destination", ".."])
        .current_dir(p.ws.join("vendor/greet"))
        .env("HOME", &p.home)
        .output()
        .unwrap();
    assert!(pack.status.success(), "{}", String::from_utf8_lossy(&pack.stderr));
    write(
        &p.ws.join("package.json"),
        "{\"name\": \"app\", \"version\": \"1.0.0\", \"dependencies\": {\"greet\": \"file:vendor/greet-1.0.0.tgz\"}}\n",
    );
    let lock = Command::new("npm")
        .args(["install", "--package-lock-only", "--offline", "--no-audit", "--no-fund", "--silent"])
        .current_dir(&p.ws)
        .env("HOME", &p.home)
        .output()
        .unwrap();
    assert!(lock.status.success(), "{}", String::from_utf8_lossy(&lock.stderr));
    let (ok, out) = build(&p, "npm ci --offline --no-audit --no-fund && node -e \"console.log(require('greet')())\"");
    assert!(ok, "{out}");
    assert!(out.contains("hello from greet"), "{out}");
    assert!(p.ws.join("node_modules/greet/index.js").exists());
}

#[test]
fn pytest_runs_in_the_default_sandbox() {
    if skip() {
        return;
    }
    let p = place();
    write(&p.ws.join("calc.py"), "def add(a, b):\n    return a + b\n");
    write(&p.ws.join("test_calc.py"), "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n");
    let (ok, out) = build(&p, "python3 -m pytest -q");
    assert!(ok, "{out}");
    assert!(out.contains("1 passed"), "{out}");
}

#[test]
fn go_test_runs_in_the_default_sandbox() {
    if skip() {
        return;
    }
    let p = place();
    write(&p.ws.join("go.mod"), "module example.com/calc\n\ngo 1.19\n");
    write(&p.ws.join("calc.go"), "package calc\n\nfunc Add(a, b int) int { return a + b }\n");
    write(
        &p.ws.join("calc_test.go"),
        "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n",
    );
    let (ok, out) = build(&p, "go test ./...");
    assert!(ok, "{out}");
    assert!(out.contains("ok") && out.contains("example.com/calc"), "{out}");
}
