use super::*;
use crate::Waiver;
use crate::policy::LayerKind;
use serde_json::json;
use std::path::PathBuf;

fn ws() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn eval(policy: &Policy, tool: &str, input: serde_json::Value, ws: &std::path::Path) -> Decision {
    Gate::new(policy).evaluate(&crate::testing::call(tool, input, ws), &Context::new(ws).with_home(None))
}

fn project(text: &str) -> Policy {
    Policy::from_layers(&[(LayerKind::Project, PathBuf::from("p.toml"), text.to_string())]).unwrap()
}

#[test]
fn write_inside_the_workspace_is_allowed() {
    let ws = ws();
    let d = eval(&Policy::builtin(), "Write", json!({"file_path": ws.path().join("a.txt"), "content": "x"}), ws.path());
    assert_eq!(d.verdict(), Verdict::Allow);
    assert_eq!(d.required_level(), AutonomyLevel::Implement);
}

#[test]
fn write_edit_multiedit_notebook_outside_are_denied() {
    let ws = ws();
    let other = tempfile::tempdir().unwrap();
    for (tool, key) in
        [("Write", "file_path"), ("Edit", "file_path"), ("MultiEdit", "file_path"), ("NotebookEdit", "notebook_path")]
    {
        let d = eval(&Policy::builtin(), tool, json!({ key: other.path().join("x") }), ws.path());
        assert_eq!(d.verdict(), Verdict::Deny, "{tool}");
        assert_eq!(d.codes(), ["path-outside-workspace"], "{tool}");
    }
}

#[test]
fn write_through_a_symlink_to_outside_is_denied() {
    let ws = ws();
    let other = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(other.path().join("target.txt"), ws.path().join("innocent.txt")).unwrap();
    let d = eval(&Policy::builtin(), "Write", json!({"file_path": ws.path().join("innocent.txt")}), ws.path());
    assert_eq!(d.codes(), ["path-outside-workspace"]);
}

#[test]
fn missing_or_mistyped_input_is_denied() {
    let ws = ws();
    for (tool, input) in [
        ("Write", json!({})),
        ("Edit", json!({"file_path": 3})),
        ("Bash", json!({"cmd": "ls"})),
        ("Bash", json!("ls")),
        ("Read", json!(null)),
    ] {
        let d = eval(&Policy::builtin(), tool, input, ws.path());
        assert_eq!(d.verdict(), Verdict::Deny, "{tool}");
        assert_eq!(d.codes(), ["tool-input-invalid"], "{tool}");
    }
}

#[test]
fn unknown_tools_get_the_policy_default() {
    let ws = ws();
    let d = eval(&Policy::builtin(), "Frobnicate", json!({}), ws.path());
    assert_eq!(d.verdict(), Verdict::Ask);
    assert_eq!(d.codes(), ["unknown-tool"]);
    let strict = project("[gate]\nunknown_tool = \"deny\"\n");
    assert_eq!(eval(&strict, "Frobnicate", json!({}), ws.path()).verdict(), Verdict::Deny);
}

#[test]
fn mcp_tools_ask_by_default() {
    let ws = ws();
    let d = eval(&Policy::builtin(), "mcp__github__create_issue", json!({"title": "x"}), ws.path());
    assert_eq!(d.verdict(), Verdict::Ask);
    assert_eq!(d.codes(), ["tool-policy"]);
}

#[test]
fn reads_and_searches_are_allowed() {
    let ws = ws();
    for (tool, input) in [
        ("Read", json!({"file_path": "/etc/hostname"})),
        ("Glob", json!({"pattern": "**/*.rs"})),
        ("Grep", json!({"pattern": "fn"})),
        ("TodoWrite", json!({"todos": []})),
        ("WebFetch", json!({"url": "https://example.com", "prompt": "x"})),
    ] {
        assert_eq!(eval(&Policy::builtin(), tool, input, ws.path()).verdict(), Verdict::Allow, "{tool}");
    }
}

#[test]
fn breaker_stopped_denies_everything() {
    let ws = ws();
    let policy = Policy::builtin();
    let ctx = Context::new(ws.path()).with_breaker(BreakerPosition::Stopped);
    let d = Gate::new(&policy).evaluate(&crate::testing::call("Read", json!({"file_path": "a"}), ws.path()), &ctx);
    assert_eq!(d.codes(), ["breaker-stopped"]);
    assert_eq!(d.effective_level(), None);
}

#[test]
fn read_only_breaker_caps_writes_but_not_reads() {
    let ws = ws();
    let policy = Policy::builtin();
    let ctx = Context::new(ws.path()).with_breaker(BreakerPosition::ReadOnly);
    let gate = Gate::new(&policy);
    let w = gate.evaluate(&crate::testing::call("Write", json!({"file_path": ws.path().join("a")}), ws.path()), &ctx);
    assert_eq!(w.codes(), ["autonomy-exceeded"]);
    assert!(w.reasons()[0].message.contains("breaker read-only"));
    let r = gate.evaluate(&crate::testing::call("Read", json!({"file_path": "a"}), ws.path()), &ctx);
    assert_eq!(r.verdict(), Verdict::Allow);
}

#[test]
fn policy_autonomy_below_pr_blocks_push_and_names_both_levels() {
    let ws = ws();
    let p = project("[gate]\nautonomy = \"implement\"\n");
    let d = eval(&p, "Bash", json!({"command": "git push origin feature"}), ws.path());
    assert_eq!(d.codes(), ["autonomy-exceeded"]);
    assert!(d.reasons()[0].message.contains("`pr`"));
    assert!(d.reasons()[0].message.contains("`implement`"));
}

#[test]
fn plan_mode_allows_reads_only() {
    let ws = ws();
    let policy = Policy::builtin();
    let ctx = Context::new(ws.path()).with_mode(ExecutionMode::Plan);
    let gate = Gate::new(&policy);
    let w = gate.evaluate(&crate::testing::call("Edit", json!({"file_path": ws.path().join("a")}), ws.path()), &ctx);
    assert_eq!(w.verdict(), Verdict::Deny);
    let r = gate.evaluate(&crate::testing::call("Grep", json!({"pattern": "x"}), ws.path()), &ctx);
    assert_eq!(r.verdict(), Verdict::Allow);
}

#[test]
fn rule_overrides_change_the_verdict() {
    let ws = ws();
    let user = Policy::from_layers(&[(
        LayerKind::User,
        PathBuf::from("u.toml"),
        "[rules]\ndestructive-git-reset-hard = \"ask\"\n".into(),
    )])
    .unwrap();
    assert_eq!(eval(&user, "Bash", json!({"command": "git reset --hard"}), ws.path()).verdict(), Verdict::Ask);
    let off = Policy::from_layers(&[(
        LayerKind::User,
        PathBuf::from("u.toml"),
        "[rules]\ndestructive-git-reset-hard = \"allow\"\n".into(),
    )])
    .unwrap();
    let d = eval(&off, "Bash", json!({"command": "git reset --hard"}), ws.path());
    assert_eq!(d.verdict(), Verdict::Allow);
    assert!(d.reasons().is_empty());
}

#[test]
fn command_rules_from_policy_apply() {
    let ws = ws();
    let p = project(
        r#"
[[commands]]
code = "no-rm-build"
program = "rm"
flags = ["r"]
args = ["build"]
decision = "deny"
message = "Do not delete build/: it holds the release artifacts."
match = ["rm -rf build", "sudo rm -r build/"]
not_match = ["rm build", "rm -rf target"]
"#,
    );
    let d = eval(&p, "Bash", json!({"command": "cd . && rm -rf build"}), ws.path());
    assert_eq!(d.codes(), ["no-rm-build"]);
    assert!(d.explain().contains("release artifacts"));
    assert_eq!(eval(&p, "Bash", json!({"command": "rm -rf target"}), ws.path()).verdict(), Verdict::Allow);
}

#[test]
fn tilde_and_home_in_tool_paths_mean_the_home_directory() {
    let ws = ws();
    let home = tempfile::tempdir().unwrap();
    let policy = Policy::builtin();
    let ctx = Context::new(ws.path()).with_home(Some(home.path()));
    let gate = Gate::new(&policy);
    for p in ["~/.bashrc", "$HOME/.profile", "${HOME}/x"] {
        let d = gate.evaluate(&crate::testing::call("Write", json!({ "file_path": p }), ws.path()), &ctx);
        assert_eq!(d.codes(), ["path-outside-workspace"], "{p}");
    }
    std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
    let d = gate.evaluate(&crate::testing::call("Read", json!({ "file_path": "~/.ssh/id_ed25519" }), ws.path()), &ctx);
    assert_eq!(d.codes(), ["credential-read"]);
}

#[test]
fn a_content_search_reads_what_its_glob_selects_and_its_path_may_name_home() {
    let ws = ws();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("config/prod")).unwrap();
    std::fs::write(ws.path().join("config/prod/.env.production"), "K=v\n").unwrap();
    std::fs::write(ws.path().join("config/app.toml"), "a = 1\n").unwrap();
    std::fs::create_dir_all(home.path().join(".aws")).unwrap();
    let policy = Policy::builtin();
    let ctx = Context::new(ws.path()).with_home(Some(home.path()));
    let gate = Gate::new(&policy);
    let grep = |input: serde_json::Value| gate.evaluate(&crate::testing::call("Grep", input, ws.path()), &ctx);
    for input in [
        json!({"pattern": "K", "glob": ".env*"}),
        json!({"pattern": "K", "path": "config", "glob": "**/.env.*"}),
        json!({"pattern": "K", "glob": "config/prod/.env.production"}),
        json!({"pattern": "K", "path": "~/.aws"}),
    ] {
        assert_eq!(grep(input.clone()).codes(), ["credential-read"], "{input}");
    }
    for input in [
        json!({"pattern": "K", "glob": "*.toml"}),
        json!({"pattern": "K", "path": "config", "glob": "*.rs"}),
        json!({"pattern": "K"}),
    ] {
        assert_eq!(grep(input.clone()).verdict(), Verdict::Allow, "{input}");
    }
    // File names only: a Glob never reads contents.
    let d = gate.evaluate(&crate::testing::call("Glob", json!({"pattern": "**/.env*"}), ws.path()), &ctx);
    assert_eq!(d.verdict(), Verdict::Allow);
}

#[test]
fn secrets_in_arguments_weigh_by_severity() {
    let ws = ws();
    let gh = format!("ghp_{}", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A");
    let d = eval(
        &Policy::builtin(),
        "Write",
        json!({"file_path": ws.path().join("a.txt"), "content": format!("t = {gh}")}),
        ws.path(),
    );
    assert_eq!((d.verdict(), d.codes()), (Verdict::Deny, vec!["secret-in-arguments".to_string()]));
    assert!(!d.explain().contains(&gh), "the reason echoes the secret");
    // One JWT (medium, 3) stays under the default score of 10; four of them ask.
    // Real JWTs: header and payload decode to JSON (`{"sub":"user-1"}`…), as the rule checks.
    let jwt = |i: u32| {
        let payload = ["E", "I", "M", "Q"][(i as usize - 1) % 4];
        format!("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLT{payload}ifQ.c2lnbmF0dXJlLXZhbHVlLWZvci10ZXN0{i}")
    };
    let one =
        eval(&Policy::builtin(), "Write", json!({"file_path": ws.path().join("a.txt"), "content": jwt(1)}), ws.path());
    assert_eq!(one.verdict(), Verdict::Allow, "{}", one.explain());
    let four = (1..=4).map(jwt).collect::<Vec<_>>().join("\n");
    let d =
        eval(&Policy::builtin(), "Write", json!({"file_path": ws.path().join("a.txt"), "content": four}), ws.path());
    assert_eq!((d.verdict(), d.codes()), (Verdict::Ask, vec!["secret-in-arguments".to_string()]));
    // The threshold is policy; a project can only lower it.
    let strict = project("[secrets]\nask_score = 3\n");
    assert_eq!(
        eval(&strict, "Write", json!({"file_path": ws.path().join("a.txt"), "content": jwt(1)}), ws.path()).verdict(),
        Verdict::Ask
    );
    assert!(
        Policy::from_layers(&[(LayerKind::Project, PathBuf::from("p.toml"), "[secrets]\nask_score = 50\n".into())])
            .is_err()
    );
    // Removing a leaked key with Edit is not blocked.
    let d = eval(
        &Policy::builtin(),
        "Edit",
        json!({"file_path": ws.path().join("a.txt"), "old_string": gh, "new_string": "t = std::env::var(\"TOKEN\")"}),
        ws.path(),
    );
    assert_eq!(d.verdict(), Verdict::Allow, "{}", d.explain());
}

#[test]
fn a_stopped_breaker_pauses_everything_and_says_so() {
    let ws = ws();
    let ctx = Context::new(ws.path()).with_home(None).with_breaker_state(
        BreakerPosition::Stopped,
        Some("consecutive_blocks reached 5 (limit 5)".into()),
        false,
    );
    for (tool, input) in [("Read", json!({"file_path": ws.path().join("a")})), ("Bash", json!({"command": "ls"}))] {
        let d = Gate::new(&Policy::builtin()).evaluate(&crate::testing::call(tool, input, ws.path()), &ctx);
        assert_eq!(d.verdict(), Verdict::Deny);
        assert_eq!(d.reasons()[0].code, BREAKER_STOPPED);
        assert!(d.reasons()[0].message.starts_with("Paused, not failed"), "{}", d.explain());
        assert!(d.reasons()[0].message.contains("consecutive_blocks reached 5"));
    }
}

#[test]
fn require_approval_turns_allows_into_asks_and_keeps_denies() {
    let ws = ws();
    let ctx = Context::new(ws.path()).with_home(None).with_breaker_state(
        BreakerPosition::FullAuto,
        Some("steps".into()),
        true,
    );
    let gate_policy = Policy::builtin();
    let gate = Gate::new(&gate_policy);
    let ok = gate.evaluate(&crate::testing::call("Bash", json!({"command": "ls"}), ws.path()), &ctx);
    assert_eq!(ok.verdict(), Verdict::Ask);
    assert_eq!(ok.reasons()[0].code, BREAKER_REQUIRE_APPROVAL);
    let bad = gate.evaluate(&crate::testing::call("Bash", json!({"command": "rm -rf /"}), ws.path()), &ctx);
    assert_eq!(bad.verdict(), Verdict::Deny);
}

#[test]
fn read_only_caps_writes_but_not_reads() {
    let ws = ws();
    let ctx = Context::new(ws.path()).with_home(None).with_breaker_state(BreakerPosition::ReadOnly, None, false);
    let p = Policy::builtin();
    let w = Gate::new(&p).evaluate(
        &crate::testing::call("Write", json!({"file_path": ws.path().join("a"), "content": "x"}), ws.path()),
        &ctx,
    );
    assert_eq!(w.verdict(), Verdict::Deny);
    assert_eq!(w.reasons()[0].code, AUTONOMY_EXCEEDED);
    assert!(w.reasons()[0].message.contains("breaker read-only"), "{}", w.explain());
    let r = Gate::new(&p)
        .evaluate(&crate::testing::call("Read", json!({"file_path": ws.path().join("a")}), ws.path()), &ctx);
    assert_eq!(r.verdict(), Verdict::Allow);
}

#[test]
fn break_glass_waives_what_it_names_but_never_a_backstop() {
    let ws = ws();
    let p = Policy::builtin();
    let gate = Gate::new(&p);
    let push = crate::testing::call("Bash", json!({"command": "git push --force origin feature"}), ws.path());
    let env_write =
        crate::testing::call("Write", json!({"file_path": ws.path().join(".env"), "content": "A=1"}), ws.path());
    let rm_root = crate::testing::call("Bash", json!({"command": "rm -rf /"}), ws.path());
    let none = Context::new(ws.path()).with_home(None);
    assert_eq!(gate.evaluate(&push, &none).verdict(), Verdict::Deny);
    assert_eq!(gate.evaluate(&env_write, &none).verdict(), Verdict::Deny);
    let ctx = none.clone().with_waivers(vec![Waiver {
        id: 7,
        rules: vec![DESTRUCTIVE_GIT_PUSH_FORCE.into(), DESTRUCTIVE_RM_ROOT.into()],
        paths: vec![".env".into()],
    }]);
    let d = gate.evaluate(&push, &ctx);
    assert_eq!(d.verdict(), Verdict::Allow, "{}", d.explain());
    assert_eq!(d.waived(), ["destructive-git-push-force (break-glass #7)"]);
    assert_eq!(gate.evaluate(&env_write, &ctx).verdict(), Verdict::Allow);
    // rm -rf / is a backstop: named or not, it stays denied.
    let d = gate.evaluate(&rm_root, &ctx);
    assert_eq!(d.verdict(), Verdict::Deny);
    assert!(d.waived().is_empty());
}

#[test]
fn the_state_home_cannot_be_read_by_the_agent() {
    let ws = ws();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(state.path().join("webhook.key"), "k").unwrap();
    let ctx = Context::new(ws.path()).with_home(None).with_protected(Some(state.path()), None);
    let p = Policy::builtin();
    let gate = Gate::new(&p);
    for (tool, input) in [
        ("Read", json!({"file_path": state.path().join("webhook.key")})),
        ("Bash", json!({"command": format!("cat {}/state.db", state.path().display())})),
        ("Grep", json!({"pattern": "argon2", "path": state.path()})),
    ] {
        let d = gate.evaluate(&crate::testing::call(tool, input, ws.path()), &ctx);
        assert_eq!(d.verdict(), Verdict::Deny, "{tool}: {}", d.explain());
        assert_eq!(d.reasons()[0].code, SELF_PROTECTION, "{tool}");
    }
}

#[test]
fn a_grant_turns_an_ask_into_an_allow_but_never_a_deny() {
    use crate::permissions::{GrantScope, PermissionGrant, PermissionStore};
    let ws = ws();
    let p = Policy::builtin();
    let gate = Gate::new(&p);
    let grant = |tool: &str, resource: Option<&str>, expires_at: Option<i64>| PermissionGrant {
        id: 4,
        tool: tool.into(),
        resource: resource.map(str::to_string),
        scope: GrantScope::Repo,
        expires_at,
        created_at: 0,
        created_by: "ann".into(),
        reason: "r".into(),
    };
    let store = PermissionStore {
        grants: vec![grant("mcp__github__*", None, Some(1000)), grant("Bash", Some("rm -rf /"), None)],
        revoked_at: None,
    };
    let mcp = crate::testing::call("mcp__github__create_issue", json!({"title": "x"}), ws.path());
    let ctx = |now| Context::new(ws.path()).with_home(None).with_permissions(store.clone(), now);
    // The policy asks for MCP tools; the grant pre-authorises them until it expires.
    assert_eq!(gate.evaluate(&mcp, &Context::new(ws.path()).with_home(None)).verdict(), Verdict::Ask);
    let d = gate.evaluate(&mcp, &ctx(999));
    assert_eq!((d.verdict(), d.granted()), (Verdict::Allow, Some(4)));
    assert_eq!(gate.evaluate(&mcp, &ctx(1000)).verdict(), Verdict::Ask, "expired between two calls");
    // A deny stays a deny whatever the grant says.
    let rm = crate::testing::call("Bash", json!({"command": "rm -rf /"}), ws.path());
    let d = gate.evaluate(&rm, &ctx(0));
    assert_eq!((d.verdict(), d.granted()), (Verdict::Deny, None));
    // The breaker's require-approval is not granted away.
    let ctx = ctx(0).with_breaker_state(BreakerPosition::FullAuto, None, true);
    assert_eq!(gate.evaluate(&mcp, &ctx).verdict(), Verdict::Ask);
}

#[test]
fn yolo_approves_asks_but_every_backstop_holds() {
    let ws = ws();
    let p = Policy::builtin();
    let gate = Gate::new(&p);
    let yolo = Context::new(ws.path()).with_home(None).with_mode(ExecutionMode::Yolo);
    let call = |tool: &str, input: serde_json::Value| crate::testing::call(tool, input, ws.path());
    // Asks become allows, and the decision says which.
    let mcp = call("mcp__x__y", json!({}));
    let d = gate.evaluate(&mcp, &yolo);
    assert_eq!(d.verdict(), Verdict::Allow);
    assert_eq!(d.yolo_approved(), ["tool-policy"]);
    let dynamic = call("Bash", json!({"command": "rm -rf \"$DIR\""}));
    assert_eq!(gate.evaluate(&dynamic, &Context::new(ws.path()).with_home(None)).verdict(), Verdict::Ask);
    assert_eq!(gate.evaluate(&dynamic, &yolo).verdict(), Verdict::Allow);
    // Denies stay: forbidden commands, paths outside, denylisted paths.
    for (tool, input) in [
        ("Bash", json!({"command": "rm -rf /"})),
        ("Write", json!({"file_path": "/etc/passwd", "content": "x"})),
        ("Write", json!({"file_path": ws.path().join(".env"), "content": "x"})),
    ] {
        let d = gate.evaluate(&call(tool, input), &yolo);
        assert_eq!(d.verdict(), Verdict::Deny, "{}", d.explain());
        assert!(d.yolo_approved().is_empty());
    }
    // The breaker's require-approval is not waved through.
    let tripped = yolo.clone().with_breaker_state(BreakerPosition::FullAuto, None, true);
    assert_eq!(gate.evaluate(&mcp, &tripped).verdict(), Verdict::Ask);
}

#[test]
fn the_mode_by_risk_matrix() {
    let ws = ws();
    let p = Policy::builtin();
    let gate = Gate::new(&p);
    let call = |tool: &str, input: serde_json::Value| crate::testing::call(tool, input, ws.path());
    let read = call("Read", json!({"file_path": ws.path().join("a")}));
    let status = call("Bash", json!({"command": "git status"}));
    let edit = call("Write", json!({"file_path": ws.path().join("a"), "content": "x"}));
    let build = call("Bash", json!({"command": "touch out.txt"}));
    let fetch = call("WebFetch", json!({"url": "https://docs.rs/", "prompt": "p"}));
    let rm_root = call("Bash", json!({"command": "rm -rf /"}));
    use ExecutionMode::*;
    use Verdict::*;
    // (call, normal, auto-edit, plan, unattended, yolo)
    let rows = [
        (&read, Allow, Allow, Allow, Allow, Allow),
        (&status, Allow, Allow, Allow, Allow, Allow),
        (&edit, Ask, Allow, Deny, Allow, Allow),
        (&build, Ask, Ask, Deny, Allow, Allow),
        (&fetch, Ask, Ask, Allow, Allow, Allow),
        (&rm_root, Deny, Deny, Deny, Deny, Deny),
    ];
    for (c, normal, auto_edit, plan, unattended, yolo) in rows {
        for (mode, want) in
            [(Normal, normal), (AutoEdit, auto_edit), (Plan, plan), (Unattended, unattended), (Yolo, yolo)]
        {
            let d = gate.evaluate(c, &Context::new(ws.path()).with_home(None).with_mode(mode));
            assert_eq!(d.verdict(), want, "{} in {mode:?}: {}", c.tool, d.explain());
        }
    }
    // With the step journal keeping pre-images, a workspace edit can be undone: low risk, no
    // confirmation in normal mode. A shell command that writes is still confirmed, and an edit
    // outside the workspace is still refused.
    let journaled = |mode| Context::new(ws.path()).with_home(None).with_mode(mode).with_journal(true);
    assert_eq!(gate.evaluate(&edit, &journaled(Normal)).verdict(), Allow);
    assert_eq!(gate.evaluate(&edit, &journaled(Plan)).verdict(), Deny);
    assert_eq!(gate.evaluate(&build, &journaled(Normal)).verdict(), Ask);
    let outside = call("Write", json!({"file_path": "/etc/hosts", "content": "x"}));
    assert_eq!(gate.evaluate(&outside, &journaled(Normal)).verdict(), Deny);
    let d = gate.evaluate(&edit, &journaled(Normal));
    assert_eq!(d.writes(), [ws.path().canonicalize().unwrap().join("a")]);
    // In normal mode a grant is the confirmation.
    let store = crate::permissions::PermissionStore {
        grants: vec![crate::permissions::PermissionGrant {
            id: 9,
            tool: "Write".into(),
            resource: Some(format!("{}/**", ws.path().display())),
            scope: crate::permissions::GrantScope::Repo,
            expires_at: None,
            created_at: 0,
            created_by: "ann".into(),
            reason: "r".into(),
        }],
        revoked_at: None,
    };
    let ctx = Context::new(ws.path()).with_home(None).with_mode(Normal).with_permissions(store, 0);
    let d = gate.evaluate(&edit, &ctx);
    assert_eq!((d.verdict(), d.granted()), (Allow, Some(9)));
    // And the policy can switch the layer off.
    let off = Policy::from_layers(&[(
        LayerKind::User,
        PathBuf::from("u.toml"),
        "[rules]\nconfirmation-required = \"allow\"\n".into(),
    )])
    .unwrap();
    let d = Gate::new(&off).evaluate(&edit, &Context::new(ws.path()).with_home(None).with_mode(Normal));
    assert_eq!(d.verdict(), Allow);
}

#[test]
fn requests_to_internal_addresses_are_denied() {
    let ws = ws();
    let p = Policy::builtin();
    let gate = Gate::new(&p);
    let ctx = Context::new(ws.path()).with_home(None);
    for (tool, input) in [
        ("WebFetch", json!({"url": "http://169.254.169.254/latest/meta-data/", "prompt": "p"})),
        ("WebFetch", json!({"url": "http://0x7f.1:8080/", "prompt": "p"})),
        ("Bash", json!({"command": "curl -s http://metadata.google.internal/computeMetadata/v1/"})),
        ("Bash", json!({"command": "wget -qO- http://[::ffff:127.0.0.1]/"})),
        ("Bash", json!({"command": "nc 10.0.0.5 6379"})),
        ("Bash", json!({"command": "ssh root@192.168.1.10 uptime"})),
    ] {
        let d = gate.evaluate(&crate::testing::call(tool, input.clone(), ws.path()), &ctx);
        assert_eq!(d.verdict(), Verdict::Deny, "{input}: {}", d.explain());
        assert!(d.codes().contains(&SSRF_INTERNAL.to_string()), "{input}: {}", d.explain());
    }
    let ok = gate.evaluate(
        &crate::testing::call("WebFetch", json!({"url": "https://docs.rs/serde", "prompt": "p"}), ws.path()),
        &ctx,
    );
    assert_eq!(ok.verdict(), Verdict::Allow, "{}", ok.explain());
    let bad =
        gate.evaluate(&crate::testing::call("WebFetch", json!({"url": "not a url", "prompt": "p"}), ws.path()), &ctx);
    assert_eq!(bad.verdict(), Verdict::Deny);
}

#[test]
fn unattended_clean_up_below_the_temp_dir_is_allowed_unless_the_workspace_lives_there() {
    let policy = Policy::builtin();
    let run = |ws: &std::path::Path, mode: ExecutionMode, cmd: &str| {
        let call = crate::testing::call("Bash", json!({ "command": cmd }), ws);
        Gate::new(&policy).evaluate(&call, &Context::new(ws).with_home(None).with_mode(mode).with_confinement(true))
    };
    // A workspace outside the temp directories (it need not exist: paths resolve lexically).
    let ws = std::path::Path::new("/srv/loopguard-test/project");
    for cmd in ["rm -rf /tmp/build-cache", "rm -f /tmp/loopguard-test.log", "rmdir /var/tmp/x"] {
        assert_eq!(run(ws, ExecutionMode::Unattended, cmd).verdict(), Verdict::Allow, "{cmd}");
    }
    // Only unattended; never the temp directory itself; never outside it.
    let d = run(ws, ExecutionMode::Normal, "rm -rf /tmp/build-cache");
    assert!(d.codes().contains(&PATH_OUTSIDE_WORKSPACE.to_string()), "{:?}", d.codes());
    assert_eq!(run(ws, ExecutionMode::Unattended, "rm -rf /tmp").verdict(), Verdict::Deny);
    assert_eq!(run(ws, ExecutionMode::Unattended, "rm -rf /srv/loopguard-test/other").verdict(), Verdict::Deny);
    // A workspace that lives in /tmp: its neighbours are not scratch.
    let in_tmp = std::path::Path::new("/tmp/loopguard-test-ws/project");
    assert_eq!(run(in_tmp, ExecutionMode::Unattended, "rm -rf /tmp/loopguard-test-ws/other").verdict(), Verdict::Deny);
}

fn bash_in(policy: &Policy, cmd: &str, ws: &std::path::Path, mode: ExecutionMode) -> Decision {
    let call = crate::testing::call("Bash", json!({ "command": cmd }), ws);
    Gate::new(policy).evaluate(&call, &Context::new(ws).with_home(None).with_mode(mode))
}

#[test]
fn a_present_human_is_asked_about_approvable_destructive_operations() {
    let ws = ws();
    let git = std::process::Command::new("git").args(["init", "-q", "-b", "feature"]).current_dir(ws.path()).status();
    assert!(git.unwrap().success());
    let p = Policy::builtin();
    for cmd in ["git push --force origin feature", "git reset --hard HEAD~1", "docker system prune -a --volumes"] {
        let normal = bash_in(&p, cmd, ws.path(), ExecutionMode::Normal);
        let unattended = bash_in(&p, cmd, ws.path(), ExecutionMode::Unattended);
        assert_eq!(normal.verdict(), Verdict::Ask, "{cmd}: {}", normal.explain());
        assert_eq!(unattended.verdict(), Verdict::Deny, "{cmd}: {}", unattended.explain());
        assert_eq!(normal.codes()[0], unattended.codes()[0], "{cmd}");
    }
    // Backstops and wipes stay denied with a human present.
    for cmd in ["rm -rf /", "rm -rf /*", "dd if=/dev/zero of=/dev/sda", ":(){ :|:& };:"] {
        assert_eq!(bash_in(&p, cmd, ws.path(), ExecutionMode::Normal).verdict(), Verdict::Deny, "{cmd}");
    }
    // A decision the policy sets is kept.
    let strict = Policy::from_layers(&[(
        LayerKind::User,
        PathBuf::from("u.toml"),
        "[rules]\ndestructive-git-reset-hard = \"deny\"\n".into(),
    )])
    .unwrap();
    assert_eq!(bash_in(&strict, "git reset --hard", ws.path(), ExecutionMode::Normal).verdict(), Verdict::Deny);
    // Above the policy's autonomy level, a present human may approve the call; unattended it is
    // denied; a breaker's cap is never lifted by asking.
    let d = bash_in(&p, "kubectl delete pod web-1", ws.path(), ExecutionMode::Normal);
    assert_eq!(d.verdict(), Verdict::Ask, "{}", d.explain());
    assert!(d.codes().contains(&"autonomy-exceeded".to_string()), "{:?}", d.codes());
    assert_eq!(bash_in(&p, "kubectl delete pod web-1", ws.path(), ExecutionMode::Unattended).verdict(), Verdict::Deny);
    let call = crate::testing::call("Bash", json!({ "command": "kubectl delete pod web-1" }), ws.path());
    let capped =
        Context::new(ws.path()).with_home(None).with_mode(ExecutionMode::Normal).with_breaker(BreakerPosition::PrOnly);
    let op =
        Policy::from_layers(&[(LayerKind::User, PathBuf::from("u.toml"), "[gate]\nautonomy = \"operate\"\n".into())])
            .unwrap();
    assert_eq!(Gate::new(&op).evaluate(&call, &capped).verdict(), Verdict::Deny);
}

#[test]
fn http_clients_follow_http_semantics() {
    let ws = ws();
    let p = Policy::builtin();
    let un = ExecutionMode::Unattended;
    let cases = [
        ("curl -s https://api.example.com/v1/items", Verdict::Allow, "network-remote-fetch"),
        ("curl -I https://example.com", Verdict::Allow, "network-remote-fetch"),
        ("curl -X DELETE https://api.vendor.com/v1/items/42", Verdict::Deny, "network-remote-delete"),
        ("curl -XDELETE -H 'Authorization: x' api.vendor.com/v1/items/42", Verdict::Deny, "network-remote-delete"),
        ("curl --request delete https://api.vendor.com/x", Verdict::Deny, "network-remote-delete"),
        ("curl -d name=x https://api.vendor.com/v1/items", Verdict::Ask, "network-remote-write"),
        ("curl --json '{}' https://api.vendor.com/v1/items", Verdict::Ask, "network-remote-write"),
        ("curl -X PATCH https://api.vendor.com/v1/items/1 -d a=b", Verdict::Ask, "network-remote-write"),
        ("curl -G -d q=rust https://search.example.com/", Verdict::Allow, "network-remote-fetch"),
        ("wget --method=PUT --body-data=x https://api.vendor.com/x", Verdict::Ask, "network-remote-write"),
        ("wget -qO- --post-data 'a=b' https://api.vendor.com/x", Verdict::Ask, "network-remote-write"),
        ("http DELETE https://api.vendor.com/x/1", Verdict::Deny, "network-remote-delete"),
        ("xh https://api.vendor.com/x name=y", Verdict::Ask, "network-remote-write"),
        ("http https://api.vendor.com/x", Verdict::Allow, "network-remote-fetch"),
    ];
    for (cmd, want, code) in cases {
        let d = bash_in(&p, cmd, ws.path(), un);
        assert_eq!(d.verdict(), want, "{cmd}: {}", d.explain());
        if want == Verdict::Allow {
            // A remote read is medium risk: allowed unattended, confirmed in normal mode.
            let normal = bash_in(&p, cmd, ws.path(), ExecutionMode::Normal);
            assert_eq!(normal.verdict(), Verdict::Ask, "{cmd}: {}", normal.explain());
        } else {
            assert!(d.codes().iter().any(|c| c == code), "{cmd}: {:?}", d.codes());
        }
    }
    // Normal mode: a remote read is confirmed like WebFetch; a DELETE is asked, not denied.
    let d = bash_in(&p, "curl -s https://api.example.com/v1/items", ws.path(), ExecutionMode::Normal);
    assert_eq!(d.verdict(), Verdict::Ask, "{}", d.explain());
    let d = bash_in(&p, "curl -X DELETE https://api.vendor.com/x", ws.path(), ExecutionMode::Normal);
    assert_eq!(d.verdict(), Verdict::Ask, "{}", d.explain());
    // Loopback reads during development are not asked about.
    let d = bash_in(&p, "curl -s http://localhost:3000/health", ws.path(), un);
    assert_eq!(d.verdict(), Verdict::Allow, "{}", d.explain());
}

#[test]
fn fetch_tools_check_what_a_name_resolves_to() {
    let ws = ws();
    let p = Policy::builtin();
    let table = crate::Dns::Table(vec![
        ("inside.example.com".into(), vec!["93.184.216.35".parse().unwrap(), "192.168.1.10".parse().unwrap()]),
        ("public.example.com".into(), vec!["93.184.216.34".parse().unwrap()]),
    ]);
    let fetch = |url: &str, dns: crate::Dns| {
        let call = crate::testing::call("WebFetch", json!({ "url": url, "prompt": "p" }), ws.path());
        Gate::new(&p).evaluate(&call, &Context::new(ws.path()).with_home(None).with_dns(dns))
    };
    let d = fetch("https://inside.example.com/admin", table.clone());
    assert_eq!(d.verdict(), Verdict::Deny, "{}", d.explain());
    assert_eq!(d.codes(), ["ssrf-internal-address"]);
    assert!(d.explain().contains("192.168.1.10"), "{}", d.explain());
    assert_eq!(fetch("https://public.example.com/", table.clone()).verdict(), Verdict::Allow);
    // Without resolution the same name passes on its spelling: the hook resolves.
    assert_eq!(fetch("https://inside.example.com/admin", crate::Dns::Off).verdict(), Verdict::Allow);
    let d = fetch("file:///etc/passwd", crate::Dns::Off);
    assert_eq!(d.verdict(), Verdict::Deny);
    assert!(d.explain().contains("scheme"), "{}", d.explain());
    let d = fetch("https://user:pw@public.example.com/", table);
    assert_eq!(d.verdict(), Verdict::Deny);
}

#[test]
fn a_secret_an_edit_writes_is_found_even_when_another_edit_replaces_it_by_itself() {
    use crate::{Action, Change, Edit};
    let ws = ws();
    let key = "AKIAZ7QXW2ERT5YUNB3C";
    let edit = |old: &str, new: &str| Edit { old: old.into(), new: new.into(), all: false };
    let call = |edits: Vec<Edit>| {
        let path = ws.path().join("config.py").display().to_string();
        let input = json!({ "file_path": path, "edits": edits.iter().map(|e| json!({"old_string": e.old, "new_string": e.new})).collect::<Vec<_>>() });
        ToolCall::new("MultiEdit", Action::WriteFile { path, change: Change::Edits(edits) }, input, ws.path())
    };
    let gate = Policy::builtin();
    let ctx = Context::new(ws.path()).with_home(None);
    // Removing a leaked key: allowed.
    let remove = Gate::new(&gate).evaluate(&call(vec![edit(&format!("K = \"{key}\""), "K = os.environ[\"K\"]")]), &ctx);
    assert_eq!(remove.verdict(), Verdict::Allow, "{}", remove.explain());
    // Writing it, with a second edit that "replaces" it by itself: the key is written.
    let smuggle = Gate::new(&gate).evaluate(
        &call(vec![
            edit("K = 1", &format!("K = \"{key}\"")),
            edit(&format!("K = \"{key}\""), &format!("K = \"{key}\"")),
        ]),
        &ctx,
    );
    assert_eq!(smuggle.verdict(), Verdict::Deny, "{}", smuggle.explain());
    assert!(smuggle.codes().iter().any(|c| c == "secret-in-arguments"));
}
