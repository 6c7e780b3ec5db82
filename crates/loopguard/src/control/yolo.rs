//! `loopguard yolo on|off`.

use super::*;

/// `yolo on`: for a while, the gate's asks are approved automatically here (operator only, always
/// with an expiry no longer than `break_glass.max`). Denies and backstops still hold.
pub fn yolo_on(
    env: &Env,
    t: &Target,
    operator: &str,
    duration: &str,
    reason: &str,
    secrets: &mut Secrets,
) -> Result<String, String> {
    let policy = policy(env, t)?;
    let max = policy.breaker().break_glass_max;
    let secs = loopguard_core::policy::parse_duration(duration)
        .ok_or_else(|| format!("--for `{duration}` is not a duration like 30m"))?;
    if secs == 0 || secs > max {
        return Err(format!("--for must be more than 0 and at most {max} s (break_glass.max)"));
    }
    if reason.trim().is_empty() {
        return Err("--reason must say why".into());
    }
    let mut store = t.store()?;
    operator::authenticate(&mut store, &[operator.to_string()], secrets, "yolo on")?;
    drop(store);
    let n = now();
    let y = crate::model::Yolo {
        operator: operator.to_string(),
        reason: reason.to_string(),
        from: n,
        until: n.saturating_add(i64::try_from(secs).unwrap_or(0)),
        ..Default::default()
    };
    let previous = hot::write(&t.state, &t.key, |tx| Ok(tx.doc().ws.yolo.replace(y.clone())))?;
    if let Some(p) = previous {
        let mut e = NewEvent::new("", EventKind::YoloSummary);
        e.details = Some(p.audit_summary(n, "replaced"));
        let _ = t.log().append(e);
    }
    let mut e = NewEvent::new("", EventKind::YoloOn);
    e.details = Some(json!({ "operator": operator, "reason": reason, "until": time(y.until), "actor": actor() }));
    t.log().append(e).map_err(|e| format!("yolo is on, but the audit event failed: {e}"))?;
    Ok(format!(
        "yolo on in {} until {} (asks approved; denies and backstops hold)\n",
        t.workspace.display(),
        time(y.until)
    ))
}

/// `yolo off`: ends the period now and audits its summary. Switching off needs no passphrase.
pub fn yolo_off(t: &Target) -> Result<String, String> {
    let n = now();
    let ended = hot::write(&t.state, &t.key, |tx| Ok(tx.doc().ws.yolo.take()))?;
    match ended {
        None => Ok("yolo was not on\n".into()),
        Some(y) => {
            let mut e = NewEvent::new("", EventKind::YoloSummary);
            e.details = Some(y.audit_summary(n, if y.until <= n { "expired" } else { "switched off" }));
            t.log().append(e).map_err(|e| format!("yolo is off, but the summary failed: {e}"))?;
            Ok(format!("yolo off; it approved {} call(s)\n", y.approved))
        }
    }
}
