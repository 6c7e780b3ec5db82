//! The success gate: nothing reaches success unreviewed. `loopguard certify --reviewed-head SHA
//! --verify '…'` re-runs the verify commands itself (never trusting a report), confirms that
//! nothing changed since the reviewed commit outside the allowed folders (committed, staged,
//! unstaged or untracked), and writes a signed `certification.json` binding the run id, the
//! policy, contract, harness and control-plane hashes, the reviewed and current HEAD, the verify
//! log's hash and each verdict. `certify --check` re-derives all of it: any later change →
//! BLOCKED.

use crate::control::Target;
use crate::operator::{self, Secrets};
use crate::state::Env;
use loopguard_audit::{EventKind, NewEvent, hex};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Output of each verify command kept in the log, at most.
const MAX_LOG_BYTES: usize = 4 << 20;

/// What to certify.
pub struct Request {
    /// The commit a human reviewed.
    pub reviewed_head: String,
    /// Verify commands (`bash -c`).
    pub verify: Vec<String>,
    /// Folders where changes since the reviewed commit are allowed.
    pub allow_dirs: Vec<String>,
    /// The run (session) id; default the newest session in the audit log.
    pub run_id: Option<String>,
    /// The certifying operator.
    pub operator: String,
}

fn git(ws: &Path, args: &[&str]) -> Result<String, String> {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(ws)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !out.status.success() {
        return Err(format!("git {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn dir(state: &Path) -> PathBuf {
    state.join("certifications")
}

/// Where a workspace's certification is kept: `certifications/<workspace key>/certification.json`.
pub fn path(t: &Target) -> PathBuf {
    dir(&t.state).join(&t.key).join("certification.json")
}

/// Files that differ from `reviewed` now (committed since, staged, unstaged, untracked), outside
/// the allowed folders.
fn changed_since(ws: &Path, reviewed: &str, allow: &[String]) -> Result<Vec<String>, String> {
    let mut files: Vec<String> = git(ws, &["diff", "--name-only", "--no-renames", reviewed])?
        .lines()
        .chain(git(ws, &["ls-files", "--others", "--exclude-standard"])?.lines())
        .map(str::to_string)
        .collect();
    files.sort();
    files.dedup();
    let allowed = |f: &str| {
        allow.iter().any(|d| {
            let d = d.trim_end_matches('/');
            !d.is_empty() && (f == d || f.starts_with(&format!("{d}/")))
        })
    };
    Ok(files.into_iter().filter(|f| !allowed(f)).collect())
}

/// The hashes a certification binds: the effective policy and each control-plane group.
fn hashes(env: &Env, t: &Target) -> Result<Value, String> {
    // The same loader as the hook: an approval read from a drifted plane approves nothing.
    let plane = crate::effective::plane(env, &t.state, &t.workspace);
    if let Err(e) = &plane.drift {
        return Err(format!("the approved control plane cannot be checked: {e}"));
    }
    let policy =
        crate::effective::load_with(env, &t.workspace, &plane).map_err(|e| format!("the policy does not load: {e}"))?;
    let plane = crate::approval::plane(env, &t.workspace);
    let groups = crate::approval::group_hashes(&plane)?;
    Ok(json!({
        "policy": hex(&Sha256::digest(policy.to_effective_toml().as_bytes())),
        "contract": groups.get("contract"),
        "harness": groups.get("harness"),
        "control_plane": groups.get("control_plane"),
    }))
}

fn newest_session(t: &Target) -> Option<String> {
    let events = t.log().tail(10_000).ok()?;
    events.iter().rev().find(|e| e.kind == EventKind::SessionStart).map(|e| e.session.clone())
}

fn sign(state: &Path, mut doc: Value) -> Result<Value, String> {
    let key = crate::keys::signing(state)?;
    doc["key"] = json!(hex(key.verifying_key().as_bytes()));
    let bytes = serde_json::to_vec(&doc).map_err(|e| e.to_string())?;
    doc["sig"] = json!(loopguard_audit::sign_bytes(&key, &bytes));
    Ok(doc)
}

/// What a certification (or its re-check) found.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Certified {
    /// CERTIFIED, or BLOCKED with the reasons.
    pub certified: bool,
    /// Why not.
    pub blocked_because: Vec<String>,
    /// The workspace.
    pub workspace: String,
    /// The commit it holds for.
    pub head: String,
    /// The run it certifies.
    pub run_id: Option<String>,
    /// The certification file (when one was written).
    pub file: Option<String>,
}

impl Certified {
    /// For a human.
    pub fn render(&self) -> String {
        let verdict = if self.certified { "CERTIFIED" } else { "BLOCKED" };
        let mut out = match &self.file {
            Some(_) => format!("{verdict}: {} at {}\n", self.workspace, self.head),
            None if self.certified => {
                format!("CERTIFIED: run {} at {}\n", self.run_id.as_deref().unwrap_or("?"), self.head)
            }
            None => "BLOCKED:\n".to_string(),
        };
        for b in &self.blocked_because {
            out.push_str(&format!("  - {b}\n"));
        }
        if let Some(f) = &self.file {
            out.push_str(&format!("certification: {f}\n"));
        }
        out
    }
}

/// Runs the success gate and writes the certification.
pub fn certify(env: &Env, t: &Target, req: &Request, secrets: &mut Secrets) -> Result<Certified, String> {
    if req.verify.is_empty() {
        return Err("at least one --verify command is needed: a certification re-runs the checks itself".into());
    }
    let mut store = t.store()?;
    operator::authenticate(&mut store, std::slice::from_ref(&req.operator), secrets, "certify")?;
    drop(store);
    let ws = &t.workspace;
    let reviewed = git(ws, &["rev-parse", "--verify", &format!("{}^{{commit}}", req.reviewed_head)])
        .map_err(|e| format!("--reviewed-head {} is not a commit here: {e}", req.reviewed_head))?
        .trim()
        .to_string();
    let head = git(ws, &["rev-parse", "HEAD"])?.trim().to_string();
    let mut blocked: Vec<String> = Vec::new();
    let before = changed_since(ws, &reviewed, &req.allow_dirs)?;
    if !before.is_empty() {
        blocked.push(format!("changed since the reviewed commit: {}", before.join(", ")));
    }
    // The verify commands, run here and now.
    let mut log = Vec::new();
    let mut results = Vec::new();
    for cmd in &req.verify {
        let out = std::process::Command::new("bash")
            .args(["-c", cmd])
            .current_dir(ws)
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| format!("cannot run `{cmd}`: {e}"))?;
        let passed = out.status.success();
        log.extend_from_slice(format!("$ {cmd}\n").as_bytes());
        for part in [&out.stdout, &out.stderr] {
            log.extend_from_slice(&part[..part.len().min(MAX_LOG_BYTES)]);
        }
        log.extend_from_slice(format!("[exit {}]\n", out.status.code().unwrap_or(-1)).as_bytes());
        if !passed {
            blocked.push(format!("`{cmd}` failed (exit {})", out.status.code().unwrap_or(-1)));
        }
        results.push(json!({ "command": cmd, "exit": out.status.code(), "passed": passed }));
    }
    // The verify commands must not have changed what was reviewed either.
    let after = changed_since(ws, &reviewed, &req.allow_dirs)?;
    if after != before {
        blocked.push(format!("the verify commands changed files: {}", after.join(", ")));
    }
    let log = loopguard_secrets::Scanner::builtin().redact(&String::from_utf8_lossy(&log));
    let verdict = if blocked.is_empty() { "CERTIFIED" } else { "BLOCKED" };
    let doc = json!({
        "v": 1,
        "verdict": verdict,
        "blocked_because": blocked,
        "run_id": req.run_id.clone().or_else(|| newest_session(t)),
        "workspace": ws.display().to_string(),
        "reviewed_head": reviewed,
        "head": head,
        "allow_dirs": req.allow_dirs,
        "hashes": hashes(env, t)?,
        "verify": results,
        "verify_log_sha256": hex(&Sha256::digest(log.as_bytes())),
        "operator": req.operator,
        "time": jiff::Timestamp::from_second(crate::effects::now()).map(|t| t.to_string()).unwrap_or_default(),
    });
    let doc = sign(&t.state, doc)?;
    loopguard_audit::create_private_dir(&dir(&t.state).join(&t.key)).map_err(|e| e.to_string())?;
    std::fs::write(dir(&t.state).join(&t.key).join("verify.log"), &log).map_err(|e| e.to_string())?;
    std::fs::write(path(t), format!("{doc:#}\n")).map_err(|e| e.to_string())?;
    let mut e = NewEvent::new(doc["run_id"].as_str().unwrap_or(""), EventKind::Certification);
    e.decision = Some(verdict.to_lowercase());
    e.details = Some(json!({ "reviewed_head": doc["reviewed_head"], "hashes": doc["hashes"],
        "verify_log_sha256": doc["verify_log_sha256"], "blocked_because": doc["blocked_because"] }));
    t.log().append(e).map_err(|e| format!("certification written, but the audit log refused it: {e}"))?;
    Ok(Certified {
        certified: verdict == "CERTIFIED",
        blocked_because: blocked,
        workspace: ws.display().to_string(),
        head,
        run_id: doc["run_id"].as_str().map(String::from),
        file: Some(path(t).display().to_string()),
    })
}

/// Re-checks a certification against the workspace as it is now.
pub fn check(env: &Env, t: &Target) -> Result<Certified, String> {
    let text = std::fs::read_to_string(path(t))
        .map_err(|_| "no certification for this workspace: run `loopguard certify` (operator)".to_string())?;
    let mut doc: Value = serde_json::from_str(&text).map_err(|e| format!("the certification is unreadable: {e}"))?;
    let mut blocked = Vec::new();
    // The signature: made with the trusted key over everything but itself.
    let sig = doc.as_object_mut().and_then(|o| o.remove("sig"));
    let trusted = crate::keys::trusted(&t.state)?;
    let sig_ok = match (sig.as_ref().and_then(Value::as_str), &trusted) {
        (Some(s), Some(k)) => {
            let bytes = serde_json::to_vec(&doc).map_err(|e| e.to_string())?;
            doc["key"].as_str() == Some(hex(k.as_bytes()).as_str()) && verify_sig(k, &bytes, s)
        }
        _ => false,
    };
    if !sig_ok {
        blocked.push("the certification's signature is not valid for the trusted key (edited or forged)".to_string());
    }
    if doc["verdict"] != "CERTIFIED" {
        blocked.push(format!("it was not certified: {}", doc["blocked_because"]));
    }
    let ws = &t.workspace;
    let head = git(ws, &["rev-parse", "HEAD"])?.trim().to_string();
    if doc["head"].as_str() != Some(head.as_str()) {
        blocked.push(format!("HEAD moved to {head}"));
    }
    let allow: Vec<String> =
        doc["allow_dirs"].as_array().into_iter().flatten().filter_map(|v| v.as_str().map(str::to_string)).collect();
    let changed = changed_since(ws, doc["reviewed_head"].as_str().unwrap_or("HEAD"), &allow)?;
    if !changed.is_empty() {
        blocked.push(format!("changed since the reviewed commit: {}", changed.join(", ")));
    }
    let now = hashes(env, t)?;
    for k in ["policy", "contract", "harness", "control_plane"] {
        if now[k] != doc["hashes"][k] {
            blocked.push(format!("the {k} hash changed"));
        }
    }
    Ok(Certified {
        certified: blocked.is_empty(),
        blocked_because: blocked,
        workspace: ws.display().to_string(),
        head,
        run_id: doc["run_id"].as_str().map(String::from),
        file: None,
    })
}

fn verify_sig(key: &loopguard_audit::VerifyingKey, bytes: &[u8], sig_hex: &str) -> bool {
    loopguard_audit::verify_signature(key, bytes, sig_hex)
}
