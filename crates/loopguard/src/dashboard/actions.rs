//! The human actions the dashboard offers, each carried out by the same function as its CLI
//! command (so the same checks and the same audit events), and each needing the operator's
//! passphrase, checked server-side (Argon2id) — in the dashboard even the tightening ones, since
//! a browser tab is easier to reach than a terminal.

use crate::control::{self, Target};
use crate::operator::{self, Secrets};
use crate::state::Env;
use serde::Deserialize;

/// One action, as the page posts it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionRequest {
    /// The workspace key.
    pub ws: String,
    /// trip, reset, grant, revoke, yolo-on, yolo-off.
    pub action: String,
    /// The operator's name.
    pub operator: String,
    /// The operator's passphrase.
    pub passphrase: String,
    /// Why (every action but revoke and yolo-off needs one).
    #[serde(default)]
    pub reason: String,
    /// trip: the position (require_approval, pr_only, read_only, stop); reset: one trigger.
    #[serde(default)]
    pub to: Option<String>,
    /// grant: the tool pattern.
    #[serde(default)]
    pub tool: Option<String>,
    /// grant: the resource pattern.
    #[serde(default)]
    pub resource: Option<String>,
    /// grant, yolo-on: how long (`30m`).
    #[serde(default)]
    pub duration: Option<String>,
    /// revoke: the grant's id.
    #[serde(default)]
    pub grant: Option<i64>,
}

/// Why an action was refused: the passphrase (the caller slows down) or anything else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// No operator, unknown operator or wrong passphrase.
    Credentials(String),
    /// The action itself was refused (its message says why).
    Other(String),
}

/// Carries out an action on `t` after checking the operator's passphrase.
pub fn perform(env: &Env, t: &Target, r: &ActionRequest) -> Result<String, Refused> {
    if r.operator.trim().is_empty() || r.passphrase.is_empty() {
        return Err(Refused::Credentials("name the operator and give the passphrase".into()));
    }
    {
        let mut store = t.store().map_err(Refused::Other)?;
        let mut once = secrets(&r.passphrase);
        operator::authenticate(&mut store, std::slice::from_ref(&r.operator), &mut once, &r.action)
            .map_err(Refused::Credentials)?;
    }
    // The functions below authenticate again (they are the CLI's): the same passphrase.
    let mut s = secrets(&r.passphrase);
    fn need<'a>(what: &'a Option<String>, name: &str) -> Result<&'a str, Refused> {
        what.as_deref().filter(|v| !v.trim().is_empty()).ok_or_else(|| Refused::Other(format!("{name} is missing")))
    }
    match r.action.as_str() {
        "trip" => {
            if r.reason.trim().is_empty() {
                return Err(Refused::Other("say why the breaker is tripped".into()));
            }
            let reason = format!("{} (from the dashboard)", r.reason);
            control::trip(t, need(&r.to, "the position")?, &reason, Some(&r.operator))
        }
        "reset" => control::reset(env, t, &r.operator, &r.reason, r.to.as_deref().filter(|s| !s.is_empty()), &mut s),
        "grant" => control::grant_add(
            t,
            &r.operator,
            need(&r.tool, "the tool")?,
            r.resource.as_deref().filter(|s| !s.is_empty()),
            r.duration.as_deref().filter(|s| !s.is_empty()),
            None,
            &r.reason,
            false,
            &mut s,
        ),
        "revoke" => control::grant_revoke(
            t,
            &r.operator,
            r.grant.ok_or_else(|| Refused::Other("the grant id is missing".into()))?,
            &mut s,
        ),
        "yolo-on" => control::yolo_on(env, t, &r.operator, need(&r.duration, "the duration")?, &r.reason, &mut s),
        "yolo-off" => control::yolo_off(t),
        other => return Err(Refused::Other(format!("unknown action `{other}`"))),
    }
    .map_err(Refused::Other)
}

/// A passphrase source that answers every question with the one passphrase given.
fn secrets(passphrase: &str) -> Secrets {
    let lines = format!("{p}\n{p}\n{p}\n", p = passphrase.replace(['\n', '\r'], ""));
    Secrets::Stdin(Box::new(std::io::Cursor::new(lines.into_bytes())))
}
