use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// `prev_hash` of the first event.
pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    /// A host session started.
    SessionStart,
    /// A host session ended (`details.recovered` when closed by a later session start).
    SessionEnd,
    /// A tool call was decided.
    PreToolUse,
    /// A tool call finished.
    PostToolUse,
    /// A tool call failed.
    PostToolUseFailure,
    /// The user submitted a prompt.
    UserPromptSubmit,
    /// The agent stopped.
    Stop,
    /// The hook itself failed and answered with a deny.
    HookError,
    /// A circuit breaker tripped (details: trigger, action, value, threshold, reason, trip id).
    BreakerTripped,
    /// An auto-reset trip cleared after its cooldown.
    BreakerRecovered,
    /// A human reset the breaker (details: operator, reason, trips cleared).
    BreakerReset,
    /// A human tripped the breaker by hand.
    BreakerManualTrip,
    /// A trip's effects were carried out (revert refs, escalation).
    BreakerEffects,
    /// A webhook delivery attempt failed.
    WebhookFailed,
    /// A human broke the glass: a scoped, time-boxed waiver.
    BreakGlass,
    /// An operator was added.
    OperatorAdded,
    /// A human granted a tool on a resource.
    GrantAdded,
    /// A human revoked a grant.
    GrantRevoked,
    /// A human switched yolo on.
    YoloOn,
    /// A yolo period ended (switched off or expired), with what it waved through.
    YoloSummary,
    /// A signed checkpoint was written (details: its number, the size it covers, its hash).
    Checkpoint,
    /// A human approved the control plane's hashes.
    Approved,
    /// The control plane no longer matches what was approved.
    ApprovalDrift,
    /// A run was certified, or its certification refused (details: verdict, hashes).
    Certification,
    /// Steps were undone from the step journal, or an undo was refused (details: steps, counts).
    Undo,
}

/// An event before it is sealed into the chain.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    /// Host session id.
    pub session: String,
    /// What happened.
    pub kind: EventKind,
    /// Tool name, for tool events.
    pub tool: Option<String>,
    /// Host's tool-use id, to find the full call in the host's transcript.
    pub tool_use_id: Option<String>,
    /// allow / ask / deny, for decisions.
    pub decision: Option<String>,
    /// Reason codes, strictest first.
    pub reasons: Vec<String>,
    /// Kind-specific facts (input hash, sizes, durations, recovery). Never raw tool input.
    pub details: Option<Value>,
}

impl NewEvent {
    /// An event with only a session and a kind.
    pub fn new(session: impl Into<String>, kind: EventKind) -> Self {
        NewEvent {
            session: session.into(),
            kind,
            tool: None,
            tool_use_id: None,
            decision: None,
            reasons: Vec::new(),
            details: None,
        }
    }
}

/// One sealed line of the audit log. Field order is the canonical order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditEvent {
    /// Format version (1).
    pub v: u32,
    /// 1-based position in the log.
    pub seq: u64,
    /// RFC 3339 UTC time of writing.
    pub time: String,
    /// Host session id.
    pub session: String,
    /// What happened.
    pub kind: EventKind,
    /// Tool name.
    pub tool: Option<String>,
    /// Host tool-use id.
    pub tool_use_id: Option<String>,
    /// allow / ask / deny.
    pub decision: Option<String>,
    /// Reason codes.
    pub reasons: Vec<String>,
    /// Kind-specific facts.
    pub details: Option<Value>,
    /// `hash` of the previous line ([`GENESIS_HASH`] for the first).
    pub prev_hash: String,
    /// SHA-256 (hex) of this line serialised without the `hash` field.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hash: String,
}

impl AuditEvent {
    pub(crate) fn seal(new: NewEvent, seq: u64, prev_hash: String) -> Self {
        let mut ev = AuditEvent {
            v: 1,
            seq,
            time: jiff::Timestamp::now().to_string(),
            session: new.session,
            kind: new.kind,
            tool: new.tool,
            tool_use_id: new.tool_use_id,
            decision: new.decision,
            reasons: new.reasons,
            details: new.details,
            prev_hash,
            hash: String::new(),
        };
        ev.hash = ev.compute_hash();
        ev
    }

    /// The sequence number and hash of a line, read without checking it (for chaining the next
    /// append; `verify` is what checks).
    pub(crate) fn tail_link(line: &str) -> Result<(u64, String), String> {
        #[derive(Deserialize)]
        struct Link {
            seq: u64,
            hash: String,
        }
        let l: Link = serde_json::from_str(line).map_err(|e| format!("not a valid event: {e}"))?;
        if l.hash.len() != 64 || !l.hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err("its hash is malformed".into());
        }
        Ok((l.seq, l.hash))
    }

    /// SHA-256 over the canonical bytes of the event without its `hash`.
    pub fn compute_hash(&self) -> String {
        let bytes = if self.hash.is_empty() {
            serde_json::to_vec(self)
        } else {
            let mut body = self.clone();
            body.hash.clear();
            serde_json::to_vec(&body)
        };
        hex(&Sha256::digest(bytes.unwrap_or_default()))
    }

    /// The canonical line (no trailing newline).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Parses a line and checks that it is in canonical form and its hash matches.
    pub fn parse_line(line: &str) -> Result<AuditEvent, String> {
        let ev: AuditEvent = serde_json::from_str(line).map_err(|e| format!("not a valid event: {e}"))?;
        if ev.to_line() != line {
            return Err("not in canonical form (the line was edited)".into());
        }
        if ev.compute_hash() != ev.hash {
            return Err("hash does not match the content (the line was edited)".into());
        }
        Ok(ev)
    }
}

/// Lowercase hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}
