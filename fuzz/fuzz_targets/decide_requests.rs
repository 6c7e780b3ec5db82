#![no_main]
//! Any bytes as `loopguard decide`'s input: never a panic, and exactly one JSON object answered
//! per non-blank line — a decision or `{"error": …}`, never a line dropped or two answers run
//! together. The first byte picks whether the bytes are wrapped into a well-formed request (so the
//! gate itself is reached), or read raw.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, data)) = data.split_first() else { return };
    let input: Vec<u8> = if pick % 2 == 0 {
        let text = String::from_utf8_lossy(data);
        let mut lines = Vec::new();
        for (i, command) in text.split('\n').enumerate().take(8) {
            let action = match i % 3 {
                0 => serde_json::json!({ "Shell": { "command": command } }),
                1 => serde_json::json!({ "ReadFile": { "path": command } }),
                _ => serde_json::json!({ "WriteFile": { "path": "/tmp/fuzz-ws/a.txt", "change": { "Whole": command } } }),
            };
            let req = serde_json::json!({ "tool": "Bash", "action": action, "workspace": "/tmp/fuzz-ws", "home": "/tmp/fuzz-home", "mode": "unattended" });
            lines.push(req.to_string());
        }
        lines.join("\n").into_bytes()
    } else {
        data.to_vec()
    };
    let mut out = Vec::new();
    let answered = loopguard::decide::serve(&input[..], &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    // The lines `serve` skips: UTF-8 and blank once trimmed.
    let expected =
        input.split(|b| *b == b'\n').filter(|l| !std::str::from_utf8(l).is_ok_and(|t| t.trim().is_empty())).count();
    assert_eq!(answered, expected);
    assert_eq!(text.lines().count(), answered);
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(v.get("verdict").is_some() || v.get("error").is_some(), "{v}");
    }
});
