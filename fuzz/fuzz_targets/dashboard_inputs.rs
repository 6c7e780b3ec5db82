#![no_main]
//! What the dashboard reads that others write: any text as a STATE.md (its blockers: bounded,
//! each with a title) and as a call-journal line, and any bytes as an action request — read or
//! refused, never a panic.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let blockers = loopguard::escalation::blockers(text);
    assert!(blockers.len() <= 200);
    let _ = serde_json::from_str::<loopguard::calls::CallRecord>(text);
    let _ = serde_json::from_slice::<loopguard::dashboard::actions::ActionRequest>(data);
    // Whatever it holds, an entry inserted is read back as the last one.
    let doc = loopguard::escalation::insert_entry(text, "\n### fuzz — entry\n- what a human must do: look\n");
    let after = loopguard::escalation::blockers(&doc);
    assert!(after.last().is_some_and(|b| b.title == "fuzz — entry"), "{doc:?}");
});
