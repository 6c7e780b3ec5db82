//! `loopguard advisories` with real RustSec OSV records (crates.io) and test records for npm,
//! PyPI and Go: import (directory and zip), check manifests and lockfiles, the hook's gate on
//! package-manager commands and manifest edits, the fixed version to use, policy settings, and
//! missing or stale data reported as such (never as "no advisories").

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;
use common::{Sandbox, fixture};

const LOCK: &str = r#"version = 3
[[package]]
name = "openssl"
version = "0.8.3"
source = "registry+https://github.com/rust-lang/crates.io-index"
[[package]]
name = "smallvec"
version = "1.6.1"
source = "registry+https://github.com/rust-lang/crates.io-index"
[[package]]
name = "app"
version = "0.1.0"
"#;

#[test]
fn import_then_check_a_lockfile() {
    let sb = Sandbox::new();
    sb.user_policy(NO_PREVIEW);
    sb.write("Cargo.lock", LOCK);
    let (code, _, err) = sb.run(&["advisories", "check"], "");
    assert_eq!(code, 2);
    assert!(err.contains("no advisory data"), "{err}");
    let (code, out, err) = sb.run(&["advisories", "import", fixture("advisories").to_str().unwrap()], "");
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "imported 3 advisories for 2 packages");
    let (code, out, _) = sb.run(&["advisories", "check", "--json"], "");
    assert_eq!(code, 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let ids: Vec<&str> = v["findings"].as_array().unwrap().iter().map(|f| f["advisory"].as_str().unwrap()).collect();
    // openssl 0.8.3 is affected by both openssl records; smallvec 1.6.1 is the fixed release of
    // RUSTSEC-2021-0003 and does not inherit it.
    assert_eq!(ids, ["RUSTSEC-2016-0001", "RUSTSEC-2023-0022"]);
    assert_eq!(v["findings"][0]["fixed"], "0.9.0");
    assert_eq!(v["findings"][0]["cvss"], 8.1);
    assert_eq!(v["dependencies"], 2, "the path package is not looked up");
    sb.write("Cargo.lock", &LOCK.replace("1.6.1", "1.6.0").replace("0.8.3", "0.10.70"));
    let (code, out, _) = sb.run(&["advisories", "check"], "");
    assert_eq!(code, 1);
    assert!(
        out.contains("`smallvec` 1.6.0 (crates.io) has advisory RUSTSEC-2021-0003, CVSS 9.8")
            && out.contains("use `smallvec` 1.6.1 or later"),
        "{out}"
    );
    assert!(!out.contains("openssl"), "{out}");
}

#[test]
fn the_gate_asks_or_denies_for_vulnerable_dependency_changes() {
    let sb = Sandbox::new();
    sb.user_policy(NO_PREVIEW);
    let verdict = |tool: &str, input: serde_json::Value| {
        common::decision(&sb.pre("s", tool, input)).map_or(("allow".to_string(), String::new()), |d| d)
    };
    // Without data the gate claims nothing either way, and says so to the human.
    let out = sb.pre("s", "Bash", serde_json::json!({"command": "cargo add smallvec@1.6.0"}));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Allowed (run inside the kernel sandbox where the kernel can confine it), with a note.
    let allowed = &v["hookSpecificOutput"];
    assert!(allowed.is_null() || allowed["permissionDecision"] == "allow", "{v}");
    assert!(v["systemMessage"].as_str().unwrap().contains("no advisory data is imported"), "{v}");
    sb.run(&["advisories", "import", fixture("advisories").to_str().unwrap()], "");
    // CVSS 9.8: denied, naming the fixed version.
    let (v, reason) = verdict("Bash", serde_json::json!({"command": "cargo add smallvec@1.6.0"}));
    assert_eq!(v, "deny");
    assert!(
        reason.contains("[vulnerable-dependency]")
            && reason.contains("RUSTSEC-2021-0003")
            && reason.contains("1.6.1 or later"),
        "{reason}"
    );
    assert_eq!(verdict("Bash", serde_json::json!({"command": "cargo add smallvec@1.6.1"})).0, "allow");
    // A Cargo.lock edit that moves openssl back to 0.8.3: CVSS 8.1 → ask.
    sb.write("Cargo.lock", &LOCK.replace("0.8.3", "0.10.70"));
    let lock = sb.ws.join("Cargo.lock");
    let (v, reason) = verdict(
        "Edit",
        serde_json::json!({"file_path": lock, "old_string": "version = \"0.10.70\"", "new_string": "version = \"0.8.3\""}),
    );
    assert_eq!(v, "ask", "{reason}");
    assert!(reason.contains("RUSTSEC-2016-0001") && reason.contains("0.9.0"), "{reason}");
    // Unchanged packages are not re-reported: an edit elsewhere in the lockfile passes.
    let (v, _) = verdict(
        "Edit",
        serde_json::json!({"file_path": lock, "old_string": "name = \"app\"", "new_string": "name = \"app2\""}),
    );
    assert_eq!(v, "allow");
}

/// The advisory gate's tests judge its answers, not the preview a high-risk ask carries.
const NO_PREVIEW: &str = "[preview]\nin_hook = false\n";

#[test]
fn broken_advisory_data_asks_rather_than_allows() {
    let sb = Sandbox::new();
    // The advisory gate alone: no simulated preview of the asked call (tests/preview.rs has it).
    sb.user_policy(NO_PREVIEW);
    sb.run(&["advisories", "import", fixture("advisories").to_str().unwrap()], "");
    std::fs::write(sb.state.join("advisories/crates.io/smallvec.jsonl"), "{not json\n").unwrap();
    let (v, reason) =
        common::decision(&sb.pre("s", "Bash", serde_json::json!({"command": "cargo add smallvec@1.6.1"}))).unwrap();
    assert_eq!(v, "ask", "{reason}");
    assert!(reason.contains("cannot be checked against the advisory data"), "{reason}");
}

fn multi(sb: &Sandbox) {
    let (code, out, err) = sb.run(&["advisories", "import", fixture("advisories-multi").to_str().unwrap()], "");
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "imported 5 advisories for 5 packages\nskipped 1 records of ecosystems loopguard does not check\n");
}

#[test]
fn npm_pypi_and_go_manifests_and_lockfiles() {
    let sb = Sandbox::new();
    sb.user_policy(NO_PREVIEW);
    multi(&sb);
    sb.write(
        "package.json",
        r#"{"dependencies":{"lodash":"^4.17.20","left-pad":"1.3.0"},"devDependencies":{"minimist":"~1.2.6"}}"#,
    );
    sb.write(
        "package-lock.json",
        r#"{"lockfileVersion":3,"packages":{"":{},"node_modules/lodash":{"version":"4.17.21"},"node_modules/mkdirp/node_modules/minimist":{"version":"0.0.8"}}}"#,
    );
    sb.write("requirements.txt", "requests==2.25.0\nflask>=2\n");
    sb.write("go.mod", "module m\n\nrequire (\n\tgolang.org/x/text v0.3.7\n)\n");
    let (code, out, err) = sb.run(&["advisories", "check", "--json"], "");
    assert_eq!(code, 1, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let got: Vec<String> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{} {} {} {} fixed={}",
                std::path::Path::new(f["file"].as_str().unwrap()).file_name().unwrap().to_string_lossy(),
                f["package"].as_str().unwrap(),
                f["checked"].as_str().unwrap_or("-"),
                f["advisory"].as_str().unwrap(),
                f["fixed"].as_str().unwrap_or("-")
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            // The lockfile pins lodash at the fixed release but a nested minimist at 0.0.8.
            "package-lock.json minimist 0.0.8 GHSA-xvch-5gv4-984h fixed=0.2.4",
            // The manifest's range admits 4.17.20: the floor is what is checked.
            "package.json lodash 4.17.20 GHSA-35jh-r3h4-6jhm fixed=4.17.21",
            "requirements.txt requests 2.25.0 GHSA-j8r2-6x86-q33q fixed=2.31.0",
        ]
    );
    assert_eq!(v["dependencies"], 8);
    // A named file only; go.mod at the fixed release is clean (exit 0).
    let (code, out, _) = sb.run(&["advisories", "check", "go.mod"], "");
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("0 advisories in 1 dependencies"), "{out}");
    sb.write("go.mod", "module m\nrequire golang.org/x/text v0.3.6\n");
    let (code, out, _) = sb.run(&["advisories", "check", "go.mod"], "");
    assert_eq!(code, 1);
    assert!(out.contains("`golang.org/x/text` 0.3.6 (Go) has advisory GO-2021-0113"), "{out}");
    // A file that is not what its name says is an error, not a clean result.
    sb.write("pyproject.toml", "[project\n");
    let (code, _, err) = sb.run(&["advisories", "check", "pyproject.toml"], "");
    assert_eq!(code, 2);
    assert!(err.contains("not a pyproject.toml"), "{err}");
    let (code, _, err) = sb.run(&["advisories", "check", "README.md"], "");
    assert_eq!(code, 2);
    assert!(err.contains("not a manifest or lockfile"), "{err}");
}

#[test]
fn the_gate_covers_npm_pip_poetry_go_commands_and_manifest_edits() {
    let sb = Sandbox::new();
    sb.user_policy(NO_PREVIEW);
    multi(&sb);
    let verdict = |tool: &str, input: serde_json::Value| {
        common::decision(&sb.pre("s", tool, input)).map_or(("allow".to_string(), String::new()), |d| d)
    };
    let bash = |cmd: &str| verdict("Bash", serde_json::json!({ "command": cmd }));
    // CVSS 9.8 → deny; 7.2 → ask; 6.1 → ask; fixed releases and unknown packages pass.
    let (v, r) = bash("npm install minimist@1.2.5");
    assert_eq!(v, "deny", "{r}");
    assert!(r.contains("GHSA-xvch-5gv4-984h") && r.contains("use `minimist` 1.2.6 or later"), "{r}");
    let (v, r) = bash("cd web && pnpm add lodash@^4.17.0");
    assert_eq!(v, "ask", "{r}");
    assert!(r.contains("admits 4.17.0") && r.contains("require `lodash` 4.17.21 or later"), "{r}");
    assert_eq!(bash("yarn add lodash@4.17.21").0, "allow");
    let (v, r) = bash("python3 -m pip install 'requests==2.30.0'");
    assert_eq!(v, "ask", "{r}");
    assert!(r.contains("GHSA-j8r2-6x86-q33q") && r.contains("2.31.0"), "{r}");
    assert_eq!(bash("poetry add requests@^2.31").0, "allow");
    assert_eq!(bash("uv add 'Requests>=2.20'").0, "ask", "PyPI names compare normalised");
    assert_eq!(bash("go get golang.org/x/text@v0.3.5").0, "ask");
    assert_eq!(bash("go get golang.org/x/text@latest").0, "allow", "the newest release has the fix");
    // Without a version, only an advisory with no fix can be predicted.
    let (v, r) = bash("npm i abandoned-widget");
    assert_eq!(v, "ask", "{r}");
    assert!(r.contains("no fixed release of `abandoned-widget` is known"), "{r}");
    assert_eq!(bash("npm i lodash").0, "allow");

    // Manifest edits: only what changes is looked up.
    sb.write("package.json", r#"{"dependencies":{"lodash":"^4.17.21"}}"#);
    let pj = sb.ws.join("package.json");
    let (v, r) = verdict(
        "Edit",
        serde_json::json!({"file_path": pj, "old_string": "\"lodash\"", "new_string": "\"minimist\":\"0.0.8\",\"lodash\""}),
    );
    assert_eq!(v, "deny", "{r}");
    assert!(r.contains("`minimist` 0.0.8 (npm) has advisory"), "{r}");
    assert!(!r.contains("lodash"), "unchanged dependencies are not re-reported: {r}");
    let (v, r) = verdict(
        "Write",
        serde_json::json!({"file_path": sb.ws.join("requirements-dev.txt"), "content": "requests>=2.3\n"}),
    );
    assert_eq!(v, "ask", "{r}");
    let pyproject = "[project]\nname = \"x\"\ndependencies = [\"requests>=2.31\"]\n";
    assert_eq!(
        verdict("Write", serde_json::json!({"file_path": sb.ws.join("pyproject.toml"), "content": pyproject})).0,
        "allow"
    );
    let gomod = "module m\nrequire golang.org/x/text v0.3.0\n";
    assert_eq!(verdict("Write", serde_json::json!({"file_path": sb.ws.join("go.mod"), "content": gomod})).0, "ask");
    let cargo = "[package]\nname = \"x\"\n[dependencies]\nsmallvec = \"1.6\"\n";
    // No crates.io data in this store: nothing claimed for smallvec.
    assert_eq!(
        verdict("Write", serde_json::json!({"file_path": sb.ws.join("Cargo.toml"), "content": cargo})).0,
        "allow"
    );
    // An edit that breaks the manifest cannot be checked: ask.
    let (v, r) = verdict("Write", serde_json::json!({"file_path": pj, "content": "{ \"dependencies\": "}));
    assert_eq!(v, "ask", "{r}");
    assert!(r.contains("not a package.json"), "{r}");
    // The audit records what the gate noted.
    let (_, tail, _) = sb.run(&["audit", "tail", "--json", "-n", "1"], "");
    let last: serde_json::Value = serde_json::from_str(tail.trim()).unwrap();
    assert!(last["details"]["advisories"].as_str().unwrap().starts_with("not checked:"), "{last}");
}

#[test]
fn zip_archives_import_like_directories() {
    let sb = Sandbox::new();
    sb.user_policy(NO_PREVIEW);
    let zip_path = sb.root.path().join("all.zip");
    {
        let f = std::fs::File::create(&zip_path).unwrap();
        let mut z = zip::ZipWriter::new(f);
        let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
        for name in ["lodash.json", "minimist.json", "debian.json"] {
            z.start_file(name, opts).unwrap();
            std::io::Write::write_all(&mut z, &std::fs::read(fixture("advisories-multi").join(name)).unwrap()).unwrap();
        }
        z.finish().unwrap();
    }
    let (code, out, err) = sb.run(&["advisories", "import", zip_path.to_str().unwrap()], "");
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("imported 2 advisories for 2 packages"), "{out}");
    sb.write("package-lock.json", r#"{"lockfileVersion":3,"packages":{"node_modules/lodash":{"version":"4.17.4"}}}"#);
    let (code, out, _) = sb.run(&["advisories", "check"], "");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("GHSA-35jh-r3h4-6jhm"), "{out}");
    // Not a zip, and an empty archive: clear errors, the old store kept.
    std::fs::write(&zip_path, b"not a zip").unwrap();
    let (code, _, err) = sb.run(&["advisories", "import", zip_path.to_str().unwrap()], "");
    assert_eq!(code, 2);
    assert!(err.contains("not a zip archive"), "{err}");
    let (code, _, _) = sb.run(&["advisories", "check"], "");
    assert_eq!(code, 1, "a failed import leaves the previous data in place");
}

#[test]
fn policy_settings_ask_deny_missing_and_max_age() {
    let sb = Sandbox::new();
    sb.user_policy(NO_PREVIEW);
    // A session per call: the denials here would otherwise trip the consecutive-blocks breaker.
    let n = std::cell::Cell::new(0);
    let verdict = |cmd: &str| {
        n.set(n.get() + 1);
        common::decision(&sb.pre(&format!("s{}", n.get()), "Bash", serde_json::json!({ "command": cmd })))
            .map_or(("allow".to_string(), String::new()), |d| d)
    };
    // `missing = "ask"`: without data a dependency change asks.
    sb.user_policy(&format!("[advisories]\nmissing = \"ask\"\n{NO_PREVIEW}"));
    let (v, r) = verdict("npm install lodash@4.17.21");
    assert_eq!(v, "ask", "{r}");
    assert!(r.contains("[advisory-data-missing]"), "{r}");
    multi(&sb);
    // `action = "deny"` and `deny_cvss`.
    sb.user_policy(&format!("[advisories]\naction = \"deny\"\n{NO_PREVIEW}"));
    assert_eq!(verdict("pip install requests==2.30.0").0, "deny");
    sb.user_policy(&format!("[advisories]\ndeny_cvss = 10.1\n{NO_PREVIEW}"));
    assert_eq!(verdict("npm install minimist@1.2.5").0, "ask", "9.8 no longer denies");
    // A project policy can only tighten: its looser values lose to the user's.
    sb.write(".loopguard/policy.toml", "[advisories]\ndeny_cvss = 7.0\nmissing = \"allow\"\n");
    assert_eq!(verdict("npm install lodash@4.17.20").0, "deny", "7.2 ≥ the project's 7.0");
    sb.write(".loopguard/policy.toml", "[advisories]\naction = \"ask\"\nmax_age_days = 90\n");
    sb.user_policy(&format!("[advisories]\naction = \"deny\"\nmax_age_days = 10\n{NO_PREVIEW}"));
    assert_eq!(verdict("pip install requests==2.30.0").0, "deny", "the project cannot turn deny into ask");
    // Stale data: every result carries the warning, and an allowed call tells the human.
    let later = (std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() + 40 * 86400)
        .to_string();
    let mut sb = sb;
    sb.extra_env.push(("LOOPGUARD_TEST_NOW".into(), later));
    let (v, r) =
        common::decision(&sb.pre("t1", "Bash", serde_json::json!({"command": "pip install requests==2.30.0"})))
            .unwrap();
    assert_eq!(v, "deny");
    assert!(r.contains("imported 40 days ago (policy maximum 10 days)"), "{r}");
    let out = sb.pre("t2", "Bash", serde_json::json!({"command": "npm install lodash@4.17.21"}));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["systemMessage"].as_str().unwrap().contains("out of date"), "{v}");
    sb.write("requirements.txt", "requests==2.31.0\n");
    let (code, out, _) = sb.run(&["advisories", "check"], "");
    assert_eq!(code, 0);
    assert!(out.starts_with("warning: the advisory data was imported 40 days ago"), "{out}");
    // Bad values are coded policy errors.
    sb.user_policy(&format!("[advisories]\naction = \"allow\"\n{NO_PREVIEW}"));
    let (code, _, err) = sb.run(&["policy", "check"], "");
    assert_ne!(code, 0);
    assert!(err.contains("advisories.action must be \"ask\" or \"deny\""), "{err}");
}

#[test]
fn a_real_npm_lockfile_written_by_npm_is_checked_nested_packages_included() {
    // tests/fixtures/lockfiles: written by `npm install --package-lock-only minimist@1.2.5
    // lodash@4.17.20 mkdirp@0.5.1` (npm 10, lockfile v3; mkdirp 0.5.1 pins its own minimist 0.0.8).
    let sb = Sandbox::new();
    sb.user_policy(NO_PREVIEW);
    multi(&sb);
    for f in ["package.json", "package-lock.json"] {
        sb.write(f, &std::fs::read_to_string(fixture("lockfiles").join(f)).unwrap());
    }
    let (code, out, err) = sb.run(&["advisories", "check", "package-lock.json", "--json"], "");
    assert_eq!(code, 1, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let mut got: Vec<String> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{} {} → {}",
                f["package"].as_str().unwrap(),
                f["checked"].as_str().unwrap(),
                f["fixed"].as_str().unwrap()
            )
        })
        .collect();
    got.sort();
    assert_eq!(got, ["lodash 4.17.20 → 4.17.21", "minimist 0.0.8 → 0.2.4", "minimist 1.2.5 → 1.2.6"]);
    assert_eq!(v["dependencies"], 4);
    // Its manifest's ranges admit the same vulnerable floors.
    let (code, out, _) = sb.run(&["advisories", "check", "package.json"], "");
    assert_eq!(code, 1);
    assert!(
        out.contains("`lodash` `^4.17.20` (npm) admits 4.17.20")
            && out.contains("`minimist` `^1.2.5` (npm) admits 1.2.5"),
        "{out}"
    );
}

#[test]
fn this_repositorys_own_cargo_lock_reads_as_a_real_lockfile() {
    let lock = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock");
    let deps = loopguard_core::advisories::manifest::cargo_lock(&std::fs::read_to_string(lock).unwrap()).unwrap();
    assert!(deps.len() > 100, "{}", deps.len());
    assert!(deps.iter().any(|d| d.name == "serde" && d.exact));
    assert!(!deps.iter().any(|d| d.name == "loopguard"), "path packages are not registry packages");
}

#[test]
fn python_lockfiles_are_checked_and_their_edits_gated() {
    let sb = Sandbox::new();
    sb.user_policy(NO_PREVIEW);
    multi(&sb);
    sb.write("uv.lock", "version = 1\n[[package]]\nname = \"requests\"\nversion = \"2.25.0\"\nsource = { registry = \"https://pypi.org/simple\" }\n");
    let (code, out, _) = sb.run(&["advisories", "check"], "");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("uv.lock: `requests` 2.25.0 (PyPI) has advisory GHSA-j8r2-6x86-q33q"), "{out}");
    let lock = "[[package]]\nname = \"requests\"\nversion = \"2.30.0\"\n";
    let d = common::decision(&sb.pre(
        "s",
        "Write",
        serde_json::json!({"file_path": sb.ws.join("poetry.lock"), "content": lock}),
    ));
    assert_eq!(d.map(|d| d.0).as_deref(), Some("ask"));
}

#[test]
fn real_yarn_and_pnpm_lockfiles_are_checked() {
    // tests/fixtures/lockfiles: written by yarn 1.22.22 and pnpm 9 for minimist 1.2.5 and
    // @types/node 20.0.0.
    let sb = Sandbox::new();
    sb.user_policy(NO_PREVIEW);
    multi(&sb);
    for f in ["yarn.lock", "pnpm-lock.yaml"] {
        sb.write(f, &std::fs::read_to_string(fixture("lockfiles").join(f)).unwrap());
        let (code, out, err) = sb.run(&["advisories", "check", f], "");
        assert_eq!(code, 1, "{f}: {out}{err}");
        assert!(out.contains("`minimist` 1.2.5 (npm) has advisory GHSA-xvch-5gv4-984h"), "{f}: {out}");
        assert!(out.contains("1 advisories in 2 dependencies"), "{f}: {out}");
    }
}
