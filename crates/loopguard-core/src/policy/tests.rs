use super::*;

fn layer(kind: LayerKind, text: &str) -> Result<Policy, PolicyError> {
    Policy::from_layers(&[(kind, PathBuf::from("policy.toml"), text.to_string())])
}

/// (code, line, col) of every diagnostic, in file order.
fn positions(e: &PolicyError) -> Vec<(&'static str, usize, usize)> {
    let mut v: Vec<_> = e.diagnostics.iter().map(|d| (d.code, d.line, d.col)).collect();
    v.sort_by_key(|x| (x.1, x.2));
    v
}

#[test]
fn builtin_policy_loads_and_names_only_configurable_rules() {
    let p = Policy::from_layers(&[]).unwrap();
    for code in p.rules.keys() {
        assert!(crate::reasons::CONFIGURABLE_RULES.contains(&code.as_str()), "{code} is not configurable");
    }
    assert_eq!(p.rule_verdict("destructive-rm-root"), Some(Verdict::Deny));
    assert_eq!(p.unknown_tool(), Verdict::Ask);
    assert_eq!(p.autonomy(), AutonomyLevel::Pr);
}

#[test]
fn reports_every_problem_at_once_with_positions() {
    let e = layer(
        LayerKind::User,
        "version = 2\n[gate]\nunknown_tool = \"maybe\"\nautonomy = \"god\"\ncolour = 1\n[rules]\nno-such-rule = \"deny\"\n",
    )
    .unwrap_err();
    assert_eq!(
        positions(&e),
        [
            ("policy-value", 1, 11),
            ("policy-value", 3, 16),
            ("policy-value", 4, 12),
            ("policy-unknown-key", 5, 1),
            ("policy-unknown-key", 7, 1),
        ]
    );
    let text = e.to_string();
    assert!(text.contains("policy.toml:5:1: error[policy-unknown-key]: unknown key `colour` in [gate]"), "{text}");
}

#[test]
fn syntax_errors_point_at_the_line() {
    let e = layer(LayerKind::Project, "[gate]\nautonomy = \"pr\n").unwrap_err();
    assert_eq!(e.diagnostics[0].code, "policy-syntax");
    assert_eq!(e.diagnostics[0].line, 2);
}

#[test]
fn wrong_types_are_reported() {
    let e = layer(LayerKind::User, "gate = 3\n[workspace]\nextra_roots = \"/tmp\"\n").unwrap_err();
    assert_eq!(positions(&e), [("policy-type", 1, 8), ("policy-type", 3, 15)]);
}

#[test]
fn user_layer_may_loosen() {
    let p = layer(
        LayerKind::User,
        "[gate]\nunknown_tool = \"allow\"\nautonomy = \"merge\"\n[workspace]\nextra_roots = [\"/tmp\"]\n[tools]\n\"mcp__*\" = \"allow\"\n[rules]\ndestructive-git-reset-hard = \"ask\"\n",
    )
    .unwrap();
    assert_eq!(p.unknown_tool(), Verdict::Allow);
    assert_eq!(p.autonomy(), AutonomyLevel::Merge);
    assert_eq!(p.extra_roots(), [PathBuf::from("/tmp")]);
    assert_eq!(p.tool_verdict("mcp__x__y"), Some(Verdict::Allow));
    assert_eq!(p.rule_verdict("destructive-git-reset-hard"), Some(Verdict::Ask));
}

#[test]
fn project_layer_may_only_tighten() {
    let e = layer(
        LayerKind::Project,
        "[gate]\nunknown_tool = \"allow\"\nautonomy = \"operate\"\n[workspace]\nextra_roots = [\"/tmp\"]\n[tools]\n\"mcp__*\" = \"allow\"\n[rules]\ndestructive-rm-root = \"ask\"\n",
    )
    .unwrap_err();
    assert!(e.diagnostics.iter().all(|d| d.code == "policy-loosens"), "{e}");
    assert_eq!(e.diagnostics.len(), 5, "{e}");
}

#[test]
fn project_layer_tightens() {
    let p = layer(
        LayerKind::Project,
        "[gate]\nunknown_tool = \"deny\"\nautonomy = \"implement\"\n[tools]\nWebFetch = \"ask\"\n\"mcp__*\" = \"deny\"\n[rules]\nshell-dynamic-command = \"deny\"\n",
    )
    .unwrap();
    assert_eq!(p.unknown_tool(), Verdict::Deny);
    assert_eq!(p.autonomy(), AutonomyLevel::Implement);
    assert_eq!(p.tool_verdict("WebFetch"), Some(Verdict::Ask));
    assert_eq!(p.tool_verdict("mcp__a__b"), Some(Verdict::Deny));
    assert_eq!(p.rule_verdict("shell-dynamic-command"), Some(Verdict::Deny));
}

#[test]
fn project_floor_beats_a_looser_user_entry() {
    let p = Policy::from_layers(&[
        (LayerKind::User, PathBuf::from("u.toml"), "[tools]\n\"mcp__*\" = \"allow\"\n".into()),
        (LayerKind::Project, PathBuf::from("p.toml"), "[tools]\nmcp__evil__run = \"deny\"\n".into()),
    ])
    .unwrap();
    assert_eq!(p.tool_verdict("mcp__evil__run"), Some(Verdict::Deny));
    assert_eq!(p.tool_verdict("mcp__good__run"), Some(Verdict::Allow));
}

#[test]
fn exact_tool_entries_win_over_globs() {
    let p = layer(LayerKind::User, "[tools]\n\"mcp__*\" = \"deny\"\nmcp__docs__search = \"allow\"\n").unwrap();
    assert_eq!(p.tool_verdict("mcp__docs__search"), Some(Verdict::Allow));
    assert_eq!(p.tool_verdict("mcp__docs__write"), Some(Verdict::Deny));
    assert_eq!(p.tool_verdict("Bash"), None);
}

#[test]
fn command_rule_examples_are_verified_on_load() {
    let e = layer(
        LayerKind::Project,
        r#"
[[commands]]
code = "no-npm-publish"
program = "npm"
args = ["publish"]
decision = "deny"
message = "no publishing"
match = ["npm publish", "npm install"]
not_match = ["npm test", "sudo npm publish"]
"#,
    )
    .unwrap_err();
    let msgs: Vec<String> = e.diagnostics.iter().map(|d| format!("{}:{}", d.line, d.message)).collect();
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    assert!(msgs[0].starts_with("8:") && msgs[0].contains("`npm install` should match but does not"), "{msgs:?}");
    assert!(msgs[1].starts_with("9:") && msgs[1].contains("`sudo npm publish` should not match but does"), "{msgs:?}");
}

#[test]
fn command_rules_are_validated() {
    let e = layer(
        LayerKind::Project,
        "[[commands]]\ncode = \"Bad Code\"\nprogram = \"/bin/rm\"\ndecision = \"allow\"\nmessage = \"x\"\nextra = 1\n\n[[commands]]\nprogram = \"rm\"\n",
    )
    .unwrap_err();
    let got: Vec<&str> = e.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(got.iter().filter(|c| **c == "policy-value").count(), 6, "{e}"); // 3 bad values + 3 missing keys
    assert_eq!(got.iter().filter(|c| **c == "policy-unknown-key").count(), 1, "{e}");
}

#[test]
fn duplicate_command_codes_across_layers_are_errors() {
    let rule = "[[commands]]\ncode = \"x-rule\"\nprogram = \"rm\"\ndecision = \"ask\"\nmessage = \"m\"\n";
    let e = Policy::from_layers(&[
        (LayerKind::User, PathBuf::from("u.toml"), rule.into()),
        (LayerKind::Project, PathBuf::from("p.toml"), rule.into()),
    ])
    .unwrap_err();
    assert_eq!(e.diagnostics.len(), 1);
    assert!(e.diagnostics[0].message.contains("already defined in u.toml"));
}

#[test]
fn load_skips_missing_files_and_reports_unreadable_ones() {
    let dir = tempfile::tempdir().unwrap();
    let p = Policy::load(Some(&dir.path().join("none.toml")), None).unwrap();
    assert_eq!(p.sources().len(), 1);
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, b"\xff\xfe").unwrap();
    let e = Policy::load(None, Some(&bad)).unwrap_err();
    assert_eq!(e.diagnostics[0].code, "policy-io");
    assert!(e.to_string().contains("not valid UTF-8"));
    let big = dir.path().join("big.toml");
    std::fs::write(&big, vec![b'#'; (MAX_POLICY_BYTES + 1) as usize]).unwrap();
    assert!(Policy::load(Some(&big), None).unwrap_err().to_string().contains("larger than"));
}

#[test]
fn effective_toml_reloads_to_the_same_policy() {
    let p = layer(LayerKind::User, "[gate]\nautonomy = \"merge\"\n[tools]\nWebFetch = \"ask\"\n").unwrap();
    let text = p.to_effective_toml();
    let again = layer(LayerKind::User, &text).unwrap();
    assert_eq!(again.autonomy(), AutonomyLevel::Merge);
    assert_eq!(again.tool_verdict("WebFetch"), Some(Verdict::Ask));
    // Same content; only the origin comments differ (everything is now from the user layer).
    let strip = |t: &str| -> Vec<String> {
        t.lines().skip(1).map(|l| l.split("  #").next().unwrap_or("").to_string()).collect()
    };
    assert_eq!(strip(&again.to_effective_toml()), strip(&text));
}

#[test]
fn prefix_and_complex_tool_globs_both_match() {
    let p = layer(
        LayerKind::User,
        "[tools]\n\"mcp__{jira,linear}__*\" = \"deny\"\n\"Web*\" = \"ask\"\n\"Note?ookEdit\" = \"deny\"\n",
    )
    .unwrap();
    assert_eq!(p.tool_verdict("mcp__jira__create"), Some(Verdict::Deny));
    assert_eq!(p.tool_verdict("mcp__github__create"), Some(Verdict::Ask)); // built-in mcp__*
    assert_eq!(p.tool_verdict("WebFetch"), Some(Verdict::Ask));
    assert_eq!(p.tool_verdict("NotebookEdit"), Some(Verdict::Deny));
    assert_eq!(p.tool_verdict("Read"), None);
    let e = layer(LayerKind::User, "[tools]\n\"mcp__[\" = \"deny\"\n").unwrap_err();
    assert_eq!(e.diagnostics[0].code, "policy-value");
}

#[test]
fn a_user_glob_overrides_a_builtin_glob() {
    let p = layer(LayerKind::User, "[tools]\n\"mcp__vault__*\" = \"allow\"\n").unwrap();
    assert_eq!(p.tool_verdict("mcp__vault__read"), Some(Verdict::Allow));
    assert_eq!(p.tool_verdict("mcp__other__x"), Some(Verdict::Ask), "the built-in mcp__* still applies elsewhere");
    // Within one layer the strictest glob wins.
    let q = layer(LayerKind::User, "[tools]\n\"mcp__*\" = \"allow\"\n\"mcp__{a,b}__*\" = \"deny\"\n").unwrap();
    assert_eq!(q.tool_verdict("mcp__a__x"), Some(Verdict::Deny));
}

#[test]
fn breakers_default_to_the_interactive_profile() {
    let p = Policy::builtin();
    assert_eq!(p.breaker().profile, Profile::Interactive);
    assert_eq!(p.breaker().rules, Profile::Interactive.rules());
    assert_eq!(p.breaker().hysteresis, 0.2);
}

#[test]
fn user_breakers_replace_the_profile_rule_of_their_trigger() {
    let p = layer(
        LayerKind::User,
        r#"
[breaker]
profile = "loop"
hysteresis = 0.1
webhook_url = "https://hooks.example.com/lg"
[[breakers]]
trigger = "steps"
threshold = 50
action = "read_only"
cooldown = "5m"
reset = "auto"
[prices."my-model"]
input = 1
output = 2.5
[break_glass]
default = "10m"
max = "1h"
dual_control = ["path:**/migrations/**"]
"#,
    )
    .unwrap();
    let b = p.breaker();
    assert_eq!(b.profile, Profile::Loop);
    let steps: Vec<_> = b.rules.iter().filter(|r| r.trigger == crate::breaker::Trigger::Steps).collect();
    assert_eq!(steps.len(), 1);
    assert_eq!((steps[0].threshold, steps[0].cooldown), (50.0, 300));
    assert_eq!(steps[0].action, crate::breaker::TripAction::ReadOnly);
    assert_eq!(b.rules.len(), Profile::Loop.rules().len());
    assert_eq!(b.webhook_url.as_deref(), Some("https://hooks.example.com/lg"));
    assert_eq!(crate::breaker::usage::price_for(&b.prices, "my-model-x").map(|p| p.output), Some(2.5));
    assert_eq!((b.break_glass_default, b.break_glass_max), (600, 3600));
    assert_eq!(b.dual_control, ["path:**/migrations/**"]);
}

#[test]
fn a_project_may_only_tighten_breakers() {
    let layers = |user: &str, project: &str| {
        Policy::from_layers(&[
            (LayerKind::User, PathBuf::from("user.toml"), user.to_string()),
            (LayerKind::Project, PathBuf::from("project.toml"), project.to_string()),
        ])
    };
    // Raising the profile and adding a breaker is fine.
    let p = layers(
        "",
        "[breaker]\nprofile = \"loop\"\n[[breakers]]\ntrigger = \"steps\"\nthreshold = 5\naction = \"stop\"\n",
    )
    .unwrap();
    assert_eq!(p.breaker().profile, Profile::Loop);
    assert_eq!(p.breaker().rules.len(), Profile::Loop.rules().len() + 1);
    // Lowering it, redirecting the webhook, changing prices or hysteresis is not.
    let e = layers(
        "[breaker]\nprofile = \"loop\"\n",
        "[breaker]\nprofile = \"interactive\"\nwebhook_url = \"http://evil.example\"\nhysteresis = 0.9\n[prices.x]\ninput = 0\noutput = 0\n",
    )
    .unwrap_err();
    let codes: Vec<_> = e.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["policy-loosens"; 4], "{e}");
}

#[test]
fn bad_breakers_are_reported_with_positions() {
    let e = layer(
        LayerKind::User,
        "[[breakers]]\ntrigger = \"moon\"\nthreshold = -1\naction = \"explode\"\ncooldown = \"soon\"\n[[breakers]]\nthreshold = 1\n",
    )
    .unwrap_err();
    assert_eq!(
        positions(&e),
        [
            ("policy-value", 2, 11),
            ("policy-value", 3, 13),
            ("policy-value", 4, 10),
            ("policy-value", 5, 12),
            ("policy-value", 6, 1),
            ("policy-value", 6, 1),
        ]
    );
}

#[test]
fn packs_are_switched_and_added_by_layer() {
    let first = crate::packs::BUILTIN_PACKS[0].id;
    let off = layer(LayerKind::User, &format!("[packs]\ndisable = [\"{first}\"]\n")).unwrap();
    assert!(off.packs().all().iter().any(|(p, on)| p.id == first && !on));
    // A project policy may not switch a pack off, nor name one that does not exist.
    let e = layer(LayerKind::Project, &format!("[packs]\ndisable = [\"{first}\"]\n")).unwrap_err();
    assert_eq!(positions(&e), [("policy-loosens", 2, 12)]);
    let e = layer(LayerKind::User, "[packs]\nenable = [\"no-such-pack\"]\nlist = 1\n").unwrap_err();
    assert_eq!(positions(&e), [("policy-value", 2, 11), ("policy-unknown-key", 3, 1)]);
    // A later layer may switch it back on.
    let on = Policy::from_layers(&[
        (LayerKind::User, PathBuf::from("u.toml"), format!("[packs]\ndisable = [\"{first}\"]\n")),
        (LayerKind::Project, PathBuf::from("p.toml"), format!("[packs]\nenable = [\"{first}\"]\n")),
    ])
    .unwrap();
    assert!(on.packs().all().iter().any(|(p, on)| p.id == first && *on));
}

#[test]
fn a_policy_pack_file_is_read_checked_and_applied() {
    let dir = tempfile::tempdir().unwrap();
    let pack = "id = \"acme\"\nfamily = \"internal\"\ntitle = \"Acme\"\ndescription = \"d\"\nprograms = [\"acmectl\"]\n\
        [[rules]]\nid = \"wipe\"\nwords = [\"wipe\"]\neffect = \"delete\"\nseverity = \"critical\"\nmessage = \"wipes the tenant\"\n\
        match = [\"acmectl wipe t1\", \"sudo acmectl wipe --all\", \"acmectl wipe\"]\nnot_match = [\"acmectl ls\", \"acmectl show wipe\", \"wipe\"]\n";
    std::fs::write(dir.path().join("acme.toml"), pack).unwrap();
    let policy_path = dir.path().join("policy.toml");
    let p =
        Policy::from_layers(&[(LayerKind::Project, policy_path.clone(), "[packs]\nfiles = [\"acme.toml\"]\n".into())])
            .unwrap();
    assert!(p.packs().has_code("acme-wipe"));
    let ws = tempfile::tempdir().unwrap();
    let call = crate::testing::call("Bash", serde_json::json!({"command": "acmectl wipe t1"}), ws.path());
    let d = crate::Gate::new(&p).evaluate(&call, &crate::Context::new(ws.path()).with_home(None));
    assert_eq!(d.verdict(), Verdict::Deny, "{}", d.explain());
    assert_eq!(d.codes(), ["acme-wipe"]);
    // A broken example, a missing file or a read-only rule makes the policy invalid.
    std::fs::write(dir.path().join("bad.toml"), pack.replace("\"acmectl ls\"", "\"acmectl wipe now\"")).unwrap();
    let e = Policy::from_layers(&[(
        LayerKind::User,
        policy_path.clone(),
        "[packs]\nfiles = [\"bad.toml\", \"none.toml\"]\n".into(),
    )])
    .unwrap_err();
    let codes: Vec<_> = e.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["policy-example", "policy-pack"], "{e}");
    std::fs::write(
        dir.path().join("ro.toml"),
        pack.replace("effect = \"delete\"\nseverity = \"critical\"\n", "level = \"observe\"\n"),
    )
    .unwrap();
    let e =
        Policy::from_layers(&[(LayerKind::User, policy_path, "[packs]\nfiles = [\"ro.toml\"]\n".into())]).unwrap_err();
    assert!(e.to_string().contains("built-in packs"), "{e}");
}

#[test]
fn a_project_policy_cannot_switch_off_a_rule_that_decides_by_its_finding() {
    // Not set by the built-in policy: the finding's own decision (often deny) applies, so a
    // project may only make it `deny`.
    for loosen in ["allow", "ask"] {
        let e = layer(LayerKind::Project, &format!("[rules]\ndestructive-infra = \"{loosen}\"\n")).unwrap_err();
        assert_eq!(positions(&e), [("policy-loosens", 2, 1)], "{loosen}");
        let pack_code = crate::packs::builtin()
            .into_iter()
            .flat_map(|p| p.rules.iter().map(|r| r.code.clone()).collect::<Vec<_>>())
            .find(|c| !crate::reasons::is_builtin(c))
            .unwrap();
        let e = layer(LayerKind::Project, &format!("[rules]\n{pack_code} = \"{loosen}\"\n")).unwrap_err();
        assert_eq!(positions(&e), [("policy-loosens", 2, 1)], "{pack_code} {loosen}");
    }
    let p = layer(LayerKind::Project, "[rules]\ndestructive-infra = \"deny\"\n").unwrap();
    assert_eq!(p.rule_verdict("destructive-infra"), Some(Verdict::Deny));
    // The user's own policy may.
    assert!(layer(LayerKind::User, "[rules]\ndestructive-infra = \"allow\"\n").is_ok());
}

#[test]
fn only_the_user_may_open_the_dashboard_beyond_loopback() {
    let text = "version = 1\n[dashboard]\nallow_remote_bind = true\n";
    let user = layer(LayerKind::User, text).unwrap();
    assert!(user.dashboard_remote_bind());
    assert!(!Policy::builtin().dashboard_remote_bind(), "off by default");
    let err = layer(LayerKind::Project, text).unwrap_err();
    assert!(err.to_string().contains("may only be set in the user policy"), "{err}");
    let err = layer(LayerKind::User, "version = 1\n[dashboard]\nbind = 1\n").unwrap_err();
    assert!(err.to_string().contains("bind"), "{err}");
}

#[test]
fn the_fleet_is_the_users_to_join_and_its_password_is_never_shown() {
    let key = "ab".repeat(32);
    let text = format!(
        "version = 1\n[fleet]\ndatabase_url = \"postgres://lg:s3cret@db/lg\"\nname = \"ci\"\ngroup = \"linux\"\nheartbeat = \"2s\"\noperator_keys = [\"{key}\"]\n"
    );
    let p = layer(LayerKind::User, &text).unwrap();
    let f = p.fleet().unwrap();
    assert_eq!((f.name.as_str(), f.group.as_deref(), f.heartbeat), ("ci", Some("linux"), 2));
    assert_eq!(f.operator_keys, vec![key.clone()]);
    assert_eq!(f.redacted_url(), "postgres://lg:***@db/lg");
    let shown = p.to_effective_toml();
    assert!(shown.contains("[fleet]") && !shown.contains("s3cret"), "{shown}");
    let kv = FleetSettings { database_url: "host=db user=lg password=s3cret".into(), ..FleetSettings::default() };
    assert_eq!(kv.redacted_url(), "host=db user=lg password=***");
    assert!(Policy::builtin().fleet().is_none());
    let err = layer(LayerKind::Project, &text).unwrap_err();
    assert!(err.to_string().contains("may only be set in the user policy"), "{err}");
    let err = layer(LayerKind::User, "version = 1\n[fleet]\nname = \"x\"\n").unwrap_err();
    assert!(err.to_string().contains("needs database_url"), "{err}");
    let err = layer(LayerKind::User, "version = 1\n[fleet]\ndatabase_url = \"x\"\noperator_keys = [\"nothex\"]\n")
        .unwrap_err();
    assert!(err.to_string().contains("64 hex digits"), "{err}");
}

/// The built-in secret paths are a floor: a user layer adds to them and cannot drop one (they are
/// what the sandbox hides too); the exceptions are how one file is let through.
#[test]
fn secret_read_is_only_ever_added_to() {
    let p = layer(LayerKind::User, "version = 1\n[paths]\nsecret_read = [\".env\", \"~/.mytool/token\"]\n").unwrap();
    let list = &p.path_lists().secret_read;
    for want in ["~/.ssh/**", "~/.aws/**", "~/.claude.json", "~/.mytool/token"] {
        assert!(list.iter().any(|x| x == want), "{want} missing from {list:?}");
    }
    assert_eq!(list.iter().filter(|x| *x == ".env").count(), 1, "{list:?}");
    let p = layer(LayerKind::User, "version = 1\n[paths]\nsecret_read_except = [\"~/.ssh/config\"]\n").unwrap();
    assert_eq!(p.path_lists().secret_read_except, vec!["~/.ssh/config".to_string()]);
}
