//! The human-facing commands: demo, install, doctor, policy check/show, audit verify/tail.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;
use common::Sandbox;

fn text(out: &std::process::Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn demo_runs_with_no_setup_and_verifies_its_log() {
    let sb = Sandbox::new();
    let out = sb.command(&["demo"]).output().unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    // The two lines naming the throwaway directories differ on every run.
    let stable: String = stdout
        .lines()
        .filter(|l| !l.starts_with("workspace ") && !l.starts_with("state "))
        .map(|l| format!("{l}\n"))
        .collect();
    insta::with_settings!({ filters => vec![(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "[TIME]")] }, {
        insta::assert_snapshot!("demo", stable);
    });
    // And it left nothing in the real state home it was given.
    assert!(!sb.state.exists());
}

/// Puts a stand-in `claude` printing `version` first on the sandbox's PATH (doctor asks it).
fn fake_claude(sb: &mut Sandbox, version: &str) {
    use std::os::unix::fs::PermissionsExt;
    let bin = sb.root.path().join("fakebin");
    std::fs::create_dir_all(&bin).unwrap();
    let claude = bin.join("claude");
    std::fs::write(&claude, format!("#!/bin/sh\necho '{version} (Claude Code)'\n")).unwrap();
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    sb.extra_env.push(("PATH".into(), path));
}

#[test]
fn doctor_reports_the_host_version_and_the_fail_closed_switch() {
    let mut sb = Sandbox::new();
    fake_claude(&mut sb, "2.1.332");
    // An install written before the switch existed: no onFailure.
    let settings = sb.ws.join(".claude/settings.json");
    assert!(sb.command(&["install", "claude-code"]).status().unwrap().success());
    let text_of = |p: &std::path::Path| std::fs::read_to_string(p).unwrap();
    std::fs::write(&settings, text_of(&settings).replace(",\n            \"onFailure\": \"block\"", "")).unwrap();
    assert!(!text_of(&settings).contains("onFailure"), "{}", text_of(&settings));
    let doc = sb.command(&["doctor"]).output().unwrap();
    let out = text(&doc).0;
    assert_eq!(doc.status.code(), Some(1), "{out}");
    assert!(out.contains("FAIL host: Claude Code 2.1.332") && out.contains("lack it"), "{out}");
    // Installing again adds the switch; doctor passes.
    assert!(sb.command(&["install", "claude-code"]).status().unwrap().success());
    let doc = sb.command(&["doctor"]).output().unwrap();
    let out = text(&doc).0;
    assert_eq!(doc.status.code(), Some(0), "{out}");
    assert!(out.contains("ok   host: Claude Code 2.1.332") && out.contains("onFailure \"block\" installed"), "{out}");
    // An older host is reported with what it cannot do, without failing.
    let mut old = Sandbox::new();
    fake_claude(&mut old, "2.1.197");
    assert!(old.command(&["install", "claude-code"]).status().unwrap().success());
    let doc = old.command(&["doctor"]).output().unwrap();
    let out = text(&doc).0;
    assert_eq!(doc.status.code(), Some(0), "{out}");
    assert!(out.contains("Claude Code 2.1.197") && out.contains("older than 2.1.295"), "{out}");
}

#[test]
fn install_then_doctor_passes() {
    let mut sb = Sandbox::new();
    fake_claude(&mut sb, "2.1.332");
    let out = sb.command(&["install", "claude-code"]).output().unwrap();
    assert!(out.status.success(), "{:?}", text(&out));
    assert!(sb.ws.join(".claude/settings.json").exists());
    let again = sb.command(&["install", "claude-code", "--project"]).output().unwrap();
    assert!(text(&again).0.contains("nothing changed"));
    let doc = sb.command(&["doctor"]).output().unwrap();
    let (stdout, _) = text(&doc);
    assert_eq!(doc.status.code(), Some(0), "{stdout}");
    let exe = env!("CARGO_BIN_EXE_loopguard");
    insta::assert_snapshot!("doctor_ok", sb.scrub(&stdout).replace(exe, "[EXE]"));
    // The sandbox probe ran `exec` for real: on this kernel, sessions and layered caches work.
    assert!(
        stdout.contains("ok   sandbox: Landlock and namespaces enforced; session namespaces (PID, loopback-only network): yes; copy-on-write caches (overlayfs): yes; cgroup delegation:"),
        "{stdout}"
    );
}

#[test]
fn doctor_reports_what_is_missing() {
    let mut sb = Sandbox::new();
    fake_claude(&mut sb, "2.1.332");
    sb.write(".loopguard/policy.toml", "[gate]\nautonomy = \"root\"\n");
    let doc = sb.command(&["doctor"]).output().unwrap();
    assert_eq!(doc.status.code(), Some(1));
    let exe = env!("CARGO_BIN_EXE_loopguard");
    insta::assert_snapshot!("doctor_missing", sb.scrub(&text(&doc).0).replace(exe, "[EXE]"));
}

#[test]
fn install_user_writes_the_user_settings() {
    let sb = Sandbox::new();
    let out = sb.command(&["install", "claude-code", "--user"]).output().unwrap();
    assert!(out.status.success());
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sb.home.join(".claude/settings.json")).unwrap()).unwrap();
    assert!(
        v["hooks"]["PreToolUse"][0]["hooks"][0]["command"].as_str().unwrap().ends_with("loopguard hook claude-code")
    );
}

#[test]
fn policy_check_renders_every_problem_with_its_source_line() {
    let sb = Sandbox::new();
    sb.write(
        ".loopguard/policy.toml",
        "[gate]\nunknown_tool = \"allow\"\ncolour = \"red\"\n\n[rules]\ndestructive-rm-root = \"sometimes\"\n",
    );
    let out = sb.command(&["policy", "check"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!("policy_check_errors", sb.scrub(&text(&out).1));
    let one = sb.command(&["policy", "check", ".loopguard/policy.toml"]).output().unwrap();
    assert_eq!(one.status.code(), Some(1));
}

#[test]
fn policy_check_and_show_on_a_good_policy() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.home.join(".config/loopguard")).unwrap();
    std::fs::write(
        sb.home.join(".config/loopguard/policy.toml"),
        "[gate]\nautonomy = \"merge\"\n[workspace]\nextra_roots = [\"/tmp/scratch\"]\n",
    )
    .unwrap();
    sb.write(".loopguard/policy.toml", "[gate]\nautonomy = \"implement\"\n[tools]\nWebFetch = \"ask\"\n");
    let out = sb.command(&["policy", "check"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    insta::assert_snapshot!("policy_check_ok", sb.scrub(&text(&out).0));
    let show = sb.command(&["policy", "show", "--effective"]).output().unwrap();
    insta::assert_snapshot!("policy_show_effective", sb.scrub(&text(&show).0));
}

#[test]
fn audit_verify_names_the_first_bad_line_and_exits_1() {
    let sb = Sandbox::new();
    for name in ["Bash_PreToolUse.json", "deny_Bash_PreToolUse.json", "Read_PreToolUse.json"] {
        sb.hook(sb.sample(name).as_bytes());
    }
    let log = std::fs::read_dir(sb.state.join("audit"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .unwrap();
    let original = std::fs::read_to_string(&log).unwrap();
    let mut lines: Vec<&str> = original.lines().collect();
    lines.remove(1);
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let out = sb.command(&["audit", "verify"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let (stdout, _) = text(&out);
    assert!(
        stdout.starts_with("TAMPERED: ") && stdout.contains(".jsonl:2: sequence number 3 where 2 was expected"),
        "{stdout}"
    );
    let tail = sb.command(&["audit", "tail", "--log", log.to_str().unwrap(), "-n", "1"]).output().unwrap();
    assert!(text(&tail).0.contains("PreToolUse Read → allow"), "{:?}", text(&tail));
}

#[test]
fn policy_packs_lists_what_the_effective_policy_has_on() {
    let sb = Sandbox::new();
    sb.user_policy("[packs]\ndisable = [\"restic\"]\n");
    let out = sb.command(&["policy", "packs", "--json"]).current_dir(&sb.ws).output().unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let rows: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert!(rows.len() >= 40, "{} packs", rows.len());
    let restic = rows.iter().find(|r| r["id"] == "restic").unwrap();
    assert_eq!(restic["enabled"], false);
    assert!(restic["rules"].as_u64().unwrap() >= 3);
    assert!(rows.iter().filter(|r| r["id"] != "restic").all(|r| r["source"] == "built-in"));
    // The human listing says the same; --markdown is docs/packs.md.
    let out = sb.command(&["policy", "packs"]).current_dir(&sb.ws).output().unwrap();
    let (human, _) = text(&out);
    assert!(human.lines().any(|l| l.starts_with("restic ") && l.contains(" no ")), "{human}");
    let out = sb.command(&["policy", "packs", "--markdown"]).output().unwrap();
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/packs.md")).unwrap();
    assert_eq!(text(&out).0, docs);
    // A project policy may not switch a pack off: the command says the policy does not load.
    std::fs::create_dir_all(sb.ws.join(".loopguard")).unwrap();
    std::fs::write(sb.ws.join(".loopguard/policy.toml"), "[packs]\ndisable = [\"aws\"]\n").unwrap();
    let out = sb.command(&["policy", "packs"]).current_dir(&sb.ws).output().unwrap();
    let (_, stderr) = text(&out);
    assert!(!out.status.success() && stderr.contains("policy-loosens"), "{stderr}");
}

/// For every other host: install writes the host's configuration (and Codex's trust), installing
/// again changes nothing, and `doctor <host>` passes every check but one — the host has not
/// called loopguard yet — which a hook call then turns to ok.
#[test]
fn each_host_installs_idempotently_and_doctor_proves_the_host_calls() {
    for (host, file, call) in [
        (
            "codex",
            ".codex/hooks.json",
            r#"{"session_id":"s","cwd":"WS","hook_event_name":"PreToolUse","permission_mode":"default","tool_name":"Bash","tool_input":{"command":"ls"}}"#,
        ),
        (
            "gemini",
            ".gemini/settings.json",
            r#"{"session_id":"s","cwd":"WS","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"ls"}}"#,
        ),
        (
            "copilot",
            ".copilot/hooks/loopguard.json",
            r#"{"session_id":"s","cwd":"WS","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}"#,
        ),
        (
            "cursor",
            ".cursor/hooks.json",
            r#"{"conversation_id":"s","workspace_roots":["WS"],"hook_event_name":"preToolUse","tool_name":"Shell","tool_input":{"command":"ls"}}"#,
        ),
    ] {
        let mut sb = Sandbox::new();
        sb.extra_env.push(("GEMINI_CLI_TRUST_WORKSPACE".into(), "true".into()));
        let out = sb.command(&["install", host]).output().unwrap();
        assert!(out.status.success(), "{host}: {:?}", text(&out));
        let path = sb.home.join(file);
        let first = std::fs::read_to_string(&path).unwrap();
        let again = sb.command(&["install", host]).output().unwrap();
        assert!(text(&again).0.contains("nothing changed"), "{host}: {:?}", text(&again));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), first, "{host}");

        let doc = sb.command(&["doctor", host]).output().unwrap();
        let out = text(&doc).0;
        assert_eq!(doc.status.code(), Some(1), "{host}: {out}");
        for check in ["hooks", "trust", "policy", "state home", "sample deny"] {
            assert!(out.contains(&format!("ok   {check}: ")), "{host}: {check}: {out}");
        }
        assert!(out.contains("FAIL host calls loopguard: no call from"), "{host}: {out}");

        let input = call.replace("WS", sb.ws.to_str().unwrap());
        let o = sb.run_hook(host, &[], input.as_bytes());
        assert_eq!(o.status.code(), Some(0), "{host}: {}", sb.render(&o));
        let doc = sb.command(&["doctor", host]).output().unwrap();
        let out = text(&doc).0;
        assert_eq!(doc.status.code(), Some(0), "{host}: {out}");
        assert!(out.contains(&format!("ok   host calls loopguard: {host} called loopguard here")), "{host}: {out}");
    }
}

/// Copilot's camelCase form: `install copilot --form camel` registers each event with its name
/// on the command line, installing again keeps the form, `doctor` checks it in that form (its
/// sample deny in the camelCase protocol) and a camelCase call counts as Copilot calling. A
/// camelCase entry that does not name its event (every call there denied) fails the check.
#[test]
fn copilot_camel_form_installs_and_doctor_checks_it_in_that_form() {
    let sb = Sandbox::new();
    let out = sb.command(&["install", "copilot", "--form", "camel"]).output().unwrap();
    assert!(out.status.success(), "{:?}", text(&out));
    assert!(text(&out).0.contains("camelCase"), "{:?}", text(&out));
    let path = sb.home.join(".copilot/hooks/loopguard.json");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let cmd = v["hooks"]["preToolUse"][0]["bash"].as_str().unwrap();
    assert!(cmd.ends_with(" hook copilot --event preToolUse"), "{v}");
    assert!(v["hooks"].get("PreToolUse").is_none(), "{v}");
    let again = sb.command(&["install", "copilot"]).output().unwrap();
    assert!(text(&again).0.contains("nothing changed"), "{:?}", text(&again));
    assert!(!sb.command(&["install", "codex", "--form", "camel"]).output().unwrap().status.success());

    let doc = sb.command(&["doctor", "copilot"]).output().unwrap();
    let out = text(&doc).0;
    assert!(out.contains("ok   hooks: all 7 events hooked in") && out.contains("(camel form)"), "{out}");
    assert!(
        out.contains("ok   sample deny: `rm -rf /` is denied by") && out.contains("(camelCase registration)"),
        "{out}"
    );
    assert!(out.contains("FAIL host calls loopguard: no call from"), "{out}");
    let call = serde_json::json!({"sessionId": "s", "timestamp": 1, "cwd": sb.ws, "toolName": "bash", "toolArgs": {"command": "ls"}});
    let o = sb.run_hook("copilot", &["--event", "preToolUse"], call.to_string().as_bytes());
    assert_eq!(o.status.code(), Some(0), "{}", sb.render(&o));
    let doc = sb.command(&["doctor", "copilot"]).output().unwrap();
    assert_eq!(doc.status.code(), Some(0), "{}", text(&doc).0);

    // A camelCase entry without `--event`: every call there is denied `hook-input-invalid`.
    let broken = std::fs::read_to_string(&path).unwrap().replace(" --event preToolUse\"", "\"");
    std::fs::write(&path, broken).unwrap();
    let doc = sb.command(&["doctor", "copilot"]).output().unwrap();
    let out = text(&doc).0;
    assert!(out.contains("FAIL hooks: the preToolUse hook in") && out.contains("does not name its event"), "{out}");
    // Both forms at once: every call decided twice.
    assert!(
        sb.command(&["install", "copilot", "--form", "pascal", "--settings"])
            .arg(sb.home.join(".copilot/hooks/other.json"))
            .status()
            .unwrap()
            .success()
    );
    let out = text(&sb.command(&["doctor", "copilot"]).output().unwrap()).0;
    assert!(out.contains("both PascalCase and camelCase"), "{out}");
}

/// An edited hook is no longer trusted by Codex (which would skip it silently): doctor says so.
#[test]
fn doctor_catches_a_codex_hook_edited_since_it_was_trusted() {
    let sb = Sandbox::new();
    assert!(sb.command(&["install", "codex"]).status().unwrap().success());
    let hooks = sb.home.join(".codex/hooks.json");
    let text_of = std::fs::read_to_string(&hooks).unwrap();
    std::fs::write(&hooks, text_of.replacen("\"timeout\": 10", "\"timeout\": 11", 1)).unwrap();
    let doc = sb.command(&["doctor", "codex"]).output().unwrap();
    let out = text(&doc).0;
    assert!(out.contains("FAIL trust: Codex skips untrusted hooks silently"), "{out}");
}

/// `install --all` wires every host found (its CLI on PATH or its configuration in HOME) at
/// user level, and nothing else.
#[test]
fn install_all_wires_the_hosts_found() {
    let mut sb = Sandbox::new();
    // No host CLI on PATH: only the configuration directories below say what is here.
    let bin = sb.root.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    sb.extra_env.push(("PATH".into(), bin.to_string_lossy().into_owned()));
    std::fs::create_dir_all(sb.home.join(".gemini")).unwrap();
    std::fs::create_dir_all(sb.home.join(".cursor")).unwrap();
    let out = sb.command(&["install", "--all"]).output().unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("gemini: installed") && stdout.contains("cursor: installed"), "{stdout}");
    assert!(sb.home.join(".gemini/settings.json").exists() && sb.home.join(".cursor/hooks.json").exists());
    assert!(!sb.home.join(".codex/hooks.json").exists() && !sb.home.join(".copilot").exists(), "{stdout}");
    assert!(!stdout.contains("codex:") && !stdout.contains("copilot:"), "{stdout}");
}

/// The binary checks itself as built: every pattern, pack and secret rule, and a fixed set of
/// decisions. A pack the user's policy adds is checked too, and a broken one is named.
#[test]
fn selftest_passes_as_built_and_names_a_broken_pack_of_the_policy() {
    let sb = Sandbox::new();
    let out = sb.command(&["selftest"]).output().unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    for group in ["built-in packs", "effective policy", "secret rules", "other patterns", "decisions"] {
        assert!(stdout.contains(&format!("ok   {group}: ")), "{group}: {stdout}");
    }
    assert!(stdout.ends_with("selftest passed\n"), "{stdout}");

    let pack = r#"id = "mine"
family = "local"
title = "Our deploy tool"
description = "frob: deploys"
programs = ["frob"]

[[rules]]
id = "frob-deploy"
words = ["deploy"]
text = '(^|\s)--prod(\s|$'
effect = "modifies remote state"
severity = "high"
level = "operate"
message = "frob deploy --prod deploys to production."
remedy = "leave it to the human."
match = ["frob deploy --prod"]
not_match = ["frob deploy --staging"]
"#;
    common::write(&sb.home.join(".config/loopguard/packs/mine.toml"), pack);
    sb.user_policy("[packs]\nfiles = [\"packs/mine.toml\"]\n");
    let out = sb.command(&["selftest"]).output().unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("FAIL effective policy") && stdout.contains("frob-deploy"), "{stdout}");
    assert!(stdout.ends_with("selftest FAILED\n"), "{stdout}");
    // The JSON report names the same problem.
    let out = sb.command(&["selftest", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let policy = v["checks"].as_array().unwrap().iter().find(|c| c["name"] == "effective policy").unwrap();
    assert!(policy["problems"][0].as_str().unwrap().contains("frob-deploy"), "{policy}");
}

/// `loopguard decide`: the gate alone, one JSON answer per request line, nothing written.
#[test]
fn decide_answers_requests_line_by_line_and_writes_no_state() {
    let sb = Sandbox::new();
    let ws = sb.ws.display();
    let req = |cmd: &str| {
        serde_json::json!({ "tool": "Bash", "action": { "Shell": { "command": cmd } }, "workspace": sb.ws, "home": sb.home })
            .to_string()
    };
    let input = format!("{}\n{{\"tool\":1}}\n{}\n", req("git push --force origin main"), req(&format!("ls {ws}")));
    let (code, stdout, stderr) = sb.run(&["decide"], &input);
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<serde_json::Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert_ne!(lines[0]["verdict"], "allow", "{stdout}");
    assert_eq!(lines[0]["codes"][0], "destructive-git-push-force", "{stdout}");
    assert!(lines[1]["error"].as_str().unwrap().starts_with("bad request"), "{stdout}");
    assert_eq!(lines[2]["verdict"], "allow", "{stdout}");
    assert!(!sb.state.exists());
}

/// A new user's first look at the breaker: a fresh state home has no day totals yet.
#[test]
fn breaker_status_works_on_a_fresh_state_home_and_creates_nothing() {
    let sb = Sandbox::new();
    let out = sb.command(&["breaker", "status"]).output().unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(!stderr.contains("No such file"), "{stderr}");
    assert!(!sb.state.join("breaker/days.state").exists());
}

/// The fake agent: every attack held under the built-in policy; a user policy that opens a
/// hole (an exception for every file under `~/.ssh`) is shown the harm it lets through.
#[test]
fn selftest_adversary_holds_under_the_defaults_and_finds_the_hole_a_policy_opens() {
    let sb = Sandbox::new();
    let out = sb.command(&["selftest", "--adversary"]).output().unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("proven read-only, only the scratch directory writable"), "{stdout}");
    assert!(stdout.contains("held wipe-ssh-script") && stdout.contains("held read-ssh-key"), "{stdout}");
    assert!(stdout.contains("\n0 of 26 attacks did harm\n"), "{stdout}");
    for id in ["test-exfil", "test-chmod-home", "test-cache-poison", "test-plant-autorun", "test-kill", "test-daemon"] {
        assert!(stdout.contains(&format!("held {id} ")), "{id}: {stdout}");
    }
    // The real state home and home are untouched: everything ran in a throwaway world.
    assert!(!sb.state.exists());
    assert!(!sb.home.join(".claude").exists());

    sb.user_policy("version = 1\n[paths]\nsecret_read_except = [\"~/.ssh/**\"]\n");
    let out = sb.command(&["selftest", "--adversary", "--json"]).output().unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let attacks = v["adversary"]["attacks"].as_array().unwrap();
    let read = attacks.iter().find(|a| a["id"] == "read-ssh-key").unwrap();
    assert_eq!(read["steps"][0], "allow", "{read}");
    assert!(read["harms"][0].as_str().unwrap().contains("the agent saw a planted secret"), "{read}");

    // With the sandbox switched off, code an ordinary `npm test` runs does every harm the
    // sandbox held: the adversary's detectors see each one (they are not checks that cannot fail).
    sb.user_policy("version = 1\n[exec]\nwrap_bash = false\n");
    let out = sb.command(&["selftest", "--adversary", "--json"]).output().unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let attacks = v["adversary"]["attacks"].as_array().unwrap();
    let harms = |id: &str| -> String {
        let a = attacks.iter().find(|a| a["id"] == id).unwrap();
        a["harms"].as_array().unwrap().iter().map(|h| h.as_str().unwrap().to_string()).collect::<Vec<_>>().join("; ")
    };
    assert!(harms("test-exfil").contains("reached a host outside, carrying a planted secret"), "{stdout}");
    assert!(harms("test-chmod-home").contains("the mode of"), "{stdout}");
    let poison = harms("test-cache-poison");
    assert!(
        poison.contains("hook.py changed")
            && poison.contains(".gitconfig created")
            && poison.contains("ci.yml changed"),
        "{poison}"
    );
    let planted = harms("test-plant-autorun");
    assert!(planted.contains(".envrc created") && planted.contains(".mcp.json created"), "{planted}");
    assert!(harms("test-kill").contains("was killed"), "{stdout}");
    assert!(harms("test-daemon").contains("socket outside took a connection"), "{stdout}");
}
