//! The dashboard: its access rules over plain HTTP, what the gate refuses agents while one runs,
//! and the page itself in a real headless Chromium (Debian's `chromium` and `chromium-driver`),
//! driven over WebDriver inside a loopback-only network namespace.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
#[path = "webdriver/mod.rs"]
mod webdriver;

use common::{Sandbox, decision};
use serde_json::{Value, json};
use std::io::BufRead;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const PASS: &str = "correct horse battery staple";
/// The hook's deadline in these tests: generous, so a loaded machine cannot turn a debug-build
/// hook's answer into a deadline deny (the deadline has tests of its own).
const DEADLINE: &[&str] = &["--deadline-ms", "60000"];

/// A running `loopguard dashboard` and the one-time URL it printed.
struct Dashboard {
    child: Child,
    url: String,
    port: u16,
}

impl Dashboard {
    fn start(sb: &Sandbox) -> Dashboard {
        let mut child = sb.command(&["dashboard"]).stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn().unwrap();
        let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let first = lines.next().expect("the dashboard prints its URL").unwrap();
        let url = first.split_whitespace().last().unwrap().to_string();
        assert!(url.starts_with("http://127.0.0.1:") && url.contains("/#token="), "{first}");
        let port = url["http://127.0.0.1:".len()..].split('/').next().unwrap().parse().unwrap();
        // Keep draining stdout so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Dashboard { child, url, port }
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn token(&self) -> String {
        self.url.split("#token=").nth(1).unwrap().to_string()
    }
}

impl Drop for Dashboard {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into()
}

fn bash(sb: &Sandbox, session: &str, id: &str, command: &str) -> std::process::Output {
    pre(sb, session, id, "Bash", json!({ "command": command }))
}

fn pre(sb: &Sandbox, session: &str, id: &str, tool: &str, input: Value) -> std::process::Output {
    let ev = json!({
        "session_id": session, "transcript_path": sb.root.path().join(format!("{session}.jsonl")),
        "cwd": sb.ws, "permission_mode": "bypassPermissions", "hook_event_name": "PreToolUse",
        "tool_name": tool, "tool_input": input, "tool_use_id": id
    });
    sb.hook_with(DEADLINE, ev.to_string().as_bytes())
}

/// The hook's verdict (an allow may come with the sandbox wrap, or as no answer at all).
fn verdict(out: &std::process::Output) -> String {
    decision(out).map_or_else(|| "allow".to_string(), |(v, _)| v)
}

fn operator(sb: &Sandbox) {
    let (code, _, err) = sb.run(&["operator", "init", "--name", "ann", "--passphrase-stdin"], &format!("{PASS}\n"));
    assert_eq!(code, 0, "{err}");
}

#[test]
fn the_api_needs_the_one_time_link_and_a_session_header() {
    let sb = Sandbox::new();
    operator(&sb);
    sb.start("s1");
    let d = Dashboard::start(&sb);
    let a = agent();
    let get = |path: &str, session: Option<&str>| {
        let mut req = a.get(&format!("{}{path}", d.base()));
        if let Some(s) = session {
            req = req.header("Authorization", &format!("Bearer {s}"));
        }
        let mut r = req.call().unwrap();
        let cookie = r.headers().get("set-cookie").is_some();
        (r.status().as_u16(), r.body_mut().read_to_string().unwrap(), cookie)
    };
    let login = |token: &str| {
        let mut r = a
            .post(&format!("{}/api/login", d.base()))
            .header("content-type", "application/json")
            .send(json!({ "token": token }).to_string())
            .unwrap();
        (r.status().as_u16(), r.body_mut().read_to_string().unwrap())
    };
    // The page holds no data and is served to anyone; the API to nobody without a session.
    assert_eq!(get("/", None).0, 200);
    assert_eq!(get("/api/overview", None).0, 401);
    assert_eq!(get("/api/overview", Some("0123")).0, 401);
    // Another Host (DNS rebinding): refused before anything else.
    let r = a.get(&format!("{}/", d.base())).header("Host", "attacker.example:80").call().unwrap();
    assert_eq!(r.status(), 421);
    // A wrong token: refused; the right one: a session secret, once. Never a cookie.
    assert_eq!(login("00").0, 403);
    let (status, body) = login(&d.token());
    assert_eq!(status, 200, "{body}");
    let session = serde_json::from_str::<Value>(&body).unwrap()["session"].as_str().unwrap().to_string();
    assert_eq!(login(&d.token()).0, 403, "the link works once");
    // The spent token left the state home's file.
    let live = std::fs::read_dir(sb.state.join("dashboard")).unwrap().next().unwrap().unwrap().path();
    let text = std::fs::read_to_string(&live).unwrap();
    assert!(!text.contains(&d.token()), "{text}");
    let (status, body, cookie) = get("/api/overview", Some(&session));
    assert_eq!(status, 200, "{body}");
    assert!(!cookie, "no cookie: a cookie for 127.0.0.1 would go to every local port");
    let r = a
        .get(&format!("{}/api/overview", d.base()))
        .header("Authorization", &format!("Bearer {session}"))
        .call()
        .unwrap();
    let csp = r.headers().get("content-security-policy").unwrap().to_str().unwrap().to_string();
    assert!(csp.contains("frame-ancestors 'none'") && csp.contains("script-src 'self'"), "{csp}");
    let o: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(o["workspaces"][0]["path"], json!(sb.ws.display().to_string()), "{o}");
    let ws = o["workspaces"][0]["key"].clone();
    let post = |session: Option<&str>, origin: Option<&str>, pass: &str| {
        let mut req = a.post(&format!("{}/api/action", d.base()));
        if let Some(s) = session {
            req = req.header("Authorization", &format!("Bearer {s}"));
        }
        if let Some(o) = origin {
            req = req.header("Origin", o);
        }
        let body =
            json!({ "ws": ws, "action": "trip", "to": "stop", "reason": "r", "operator": "ann", "passphrase": pass });
        let mut r = req.header("content-type", "application/json").send(body.to_string()).unwrap();
        (r.status().as_u16(), r.body_mut().read_to_string().unwrap())
    };
    // An action without a session, or from another origin: refused before the passphrase.
    assert_eq!(post(None, None, PASS).0, 401);
    assert_eq!(post(Some(&session), Some("http://evil.example"), PASS).0, 403);
    let (status, text) = post(Some(&session), Some(&d.base()), PASS);
    assert_eq!(status, 200, "{text}");
    let (_, status_json, _) = sb.run(&["breaker", "status", "--json"], "");
    let status: Value = serde_json::from_str(&status_json).unwrap();
    assert_eq!(status["position"], "stopped", "{status_json}");
    assert!(status_json.contains("tripped by hand by ann: r (from the dashboard)"), "{status_json}");
    // The audit event names the operator whose passphrase was checked as the actor.
    let (_, tail, _) = sb.run(&["audit", "tail", "--json", "-n", "1"], "");
    let trip: Value = serde_json::from_str(tail.lines().last().unwrap()).unwrap();
    assert_eq!(trip["kind"], "breaker-manual-trip", "{tail}");
    assert_eq!(trip["details"]["actor"], "ann", "{tail}");
    assert_eq!(trip["details"]["operator"], "ann", "{tail}");
    // Every other action, with the CLI's audit events.
    let act = |body: Value| {
        let mut r = a
            .post(&format!("{}/api/action", d.base()))
            .header("Authorization", &format!("Bearer {session}"))
            .header("content-type", "application/json")
            .send(body.to_string())
            .unwrap();
        (r.status().as_u16(), r.body_mut().read_to_string().unwrap())
    };
    let base = json!({ "ws": ws, "operator": "ann", "passphrase": PASS, "reason": "from the browser" });
    let with = |extra: Value| {
        let mut b = base.clone();
        b.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        b
    };
    for body in [
        with(json!({ "action": "reset" })),
        with(json!({ "action": "grant", "tool": "Bash", "resource": "make test", "duration": "1h" })),
        with(json!({ "action": "revoke", "grant": 1 })),
        with(json!({ "action": "yolo-on", "duration": "10m" })),
        with(json!({ "action": "yolo-off" })),
    ] {
        let (status, text) = act(body.clone());
        assert_eq!(status, 200, "{body}: {text}");
    }
    let (status, text) = act(with(json!({ "action": "grant" })));
    assert_eq!(status, 400, "a grant without a tool: {text}");
    let (_, tail, _) = sb.run(&["audit", "tail", "--json", "-n", "8"], "");
    let kinds: Vec<String> =
        tail.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["kind"].as_str().unwrap().to_string()).collect();
    for want in ["breaker-manual-trip", "breaker-reset", "grant-added", "grant-revoked", "yolo-on", "yolo-summary"] {
        assert!(kinds.iter().any(|k| k == want), "no {want} in {kinds:?}");
    }
    // Wrong passphrases: refused, each; after five in a minute, no more tries at all.
    for _ in 0..5 {
        let (status, text) = post(Some(&session), None, "wrong wrong wrong");
        assert_eq!(status, 403, "{text}");
    }
    let (status, text) = post(Some(&session), None, PASS);
    assert_eq!(status, 429, "{text}");
}

#[test]
fn agents_are_refused_the_dashboards_port_token_and_file() {
    let sb = Sandbox::new();
    let d = Dashboard::start(&sb);
    let token = d.token();
    let live = std::fs::read_dir(sb.state.join("dashboard")).unwrap().next().unwrap().unwrap().path();
    let port = d.port;
    // Another local port is the developer's own service, as before (asked first: the denies
    // below trip the breaker).
    let other = if port == 3000 { 3001 } else { 3000 };
    let out = bash(&sb, "s", "ok", &format!("curl -s http://localhost:{other}/health"));
    assert_eq!(verdict(&out), "allow", "a GET to another loopback port stays allowed");
    for (i, cmd) in [
        format!("curl -s http://127.0.0.1:{port}/api/overview"),
        format!("curl -s localhost:{port}/"),
        format!("wget -qO- http://[::1]:{port}/login"),
        format!("exec 3<>/dev/tcp/127.0.0.1/{port}"),
        format!("nc 127.0.0.1 {port}"),
        format!("cat {}", live.display()),
        format!("echo {token}"),
    ]
    .iter()
    .enumerate()
    {
        let out = bash(&sb, "s", &format!("t{i}"), cmd);
        let (verdict, reason) = decision(&out).unwrap_or_else(|| panic!("`{cmd}` was allowed"));
        assert_eq!(verdict, "deny", "`{cmd}`: {reason}");
    }
    let out = pre(&sb, "s", "f", "WebFetch", json!({ "url": format!("http://127.0.0.1:{port}/"), "prompt": "x" }));
    assert_eq!(verdict(&out), "deny");
    let out = pre(&sb, "s", "m", "mcp__browser__navigate", json!({ "url": format!("http://localhost:{port}/") }));
    assert_eq!(verdict(&out), "deny", "an MCP browser tool");
    // Nor may the agent start a dashboard of its own.
    assert_eq!(verdict(&bash(&sb, "s", "own", "loopguard dashboard --bind 127.0.0.1:0 &")), "deny");
    let audit = sb.run(&["audit", "tail", "--json", "-n", "3"], "").1;
    assert!(audit.contains("self-protection"), "{audit}");
}

#[test]
fn a_dashboard_that_is_gone_guards_nothing() {
    let sb = Sandbox::new();
    let d = Dashboard::start(&sb);
    let port = d.port;
    // Killed outright: its file stays behind, its process does not.
    drop(d);
    assert!(std::fs::read_dir(sb.state.join("dashboard")).unwrap().next().is_some());
    let out = bash(&sb, "s", "after", &format!("curl -s http://localhost:{port}/health"));
    assert_eq!(verdict(&out), "allow", "the port of a dead dashboard is an ordinary port again");
}

/// The browser test runs in a loopback-only network namespace: this re-runs this test binary's
/// `in_the_browser` there (`unshare -rn`, loopback up).
#[test]
fn the_dashboard_in_a_real_browser() {
    assert!(
        webdriver::available(),
        "the browser tests need Debian's chromium and chromium-driver (.ci/run installs them: apt-get install chromium chromium-driver)"
    );
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new("unshare")
        .args(["-rn", "sh", "-c", "ip link set lo up && exec \"$0\" \"$@\""])
        .arg(&exe)
        .args(["--exact", "in_the_browser", "--include-ignored", "--nocapture", "--test-threads=1"])
        .env("LOOPGUARD_TEST_NETNS", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("test in_the_browser ... ok"), "{stdout}\n{stderr}");
}

#[test]
#[ignore = "run by the_dashboard_in_a_real_browser inside a loopback-only network namespace"]
fn in_the_browser() {
    assert_eq!(
        std::env::var("LOOPGUARD_TEST_NETNS").as_deref(),
        Ok("1"),
        "run through the_dashboard_in_a_real_browser"
    );
    let sb = Sandbox::new();
    operator(&sb);
    // A symlink chain for the path view: evil → sub/hop (inside) → outside (escapes).
    let outside = sb.root.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(sb.ws.join("sub")).unwrap();
    std::os::unix::fs::symlink(&outside, sb.ws.join("sub/hop")).unwrap();
    std::os::unix::fs::symlink("sub/hop", sb.ws.join("evil")).unwrap();
    sb.start("sess-1");
    let d = Dashboard::start(&sb);
    let b = webdriver::Browser::start();
    let shots = webdriver::screenshot_dir();
    b.goto(&d.url);
    b.wait_until("the feed is live", "return document.getElementById('conn').textContent === 'live'", 30);
    b.wait_until("the panels load", "return !!document.querySelector('.ladder .current')", 30);

    // A scripted hook session appears live in the feed.
    let t0 = Instant::now();
    assert_eq!(verdict(&bash(&sb, "sess-1", "c1", "ls -la")), "allow");
    b.wait_until("the allowed call appears", "return [...document.querySelectorAll('#feed li')].some(l => l.dataset.kind === 'pre-tool-use' && l.dataset.decision === 'allow')", 20);
    eprintln!("feed: an allowed call appeared {} ms after the hook was started", t0.elapsed().as_millis());
    b.wait_until(
        "the gate's edge turns green",
        "return document.getElementById('edge-in').classList.contains('allow')",
        10,
    );

    // A blocked call turns the gate's edge red, after pulsing amber as it passes the gate.
    b.js(
        "window.__edge = []; new MutationObserver(() => window.__edge.push(document.getElementById('edge-in').getAttribute('class'))) \
         .observe(document.getElementById('edge-in'), { attributes: true });",
        vec![],
    );
    let out = bash(&sb, "sess-1", "c2", "ls -la && rm -rf ~ ; echo done");
    assert_eq!(verdict(&out), "deny");
    b.wait_until(
        "the gate's edge turns red",
        "return document.getElementById('edge-in').classList.contains('block')",
        20,
    );
    let stroke = b.js("return getComputedStyle(document.getElementById('edge-in')).stroke", vec![]);
    assert_eq!(stroke, json!("rgb(179, 38, 30)"), "the blocked edge is drawn red");
    let seen = b.js("return window.__edge.map(c => c.split(' ').pop())", vec![]);
    let seen: Vec<String> = serde_json::from_value(seen).unwrap();
    let amber = seen.iter().position(|c| c == "inflight").unwrap_or_else(|| panic!("never amber: {seen:?}"));
    assert!(seen[amber..].iter().any(|c| c == "block"), "amber, then red: {seen:?}");
    b.screenshot(&shots.join("canvas-blocked.png"));

    // Double-click the shell call: its segments as chips, each green or red.
    let last = b.wait_for("#last-call", 5);
    b.gesture(&last, "mouse", &[(0, 0), (60, 0)]);
    b.wait_for("#segments li", 20);
    let verdicts = b.js("return [...document.querySelectorAll('#segments li')].map(l => l.dataset.verdict)", vec![]);
    assert_eq!(verdicts, json!(["allow", "deny", "allow"]), "ls, rm -rf ~, echo");
    let colors = b.js(
        "return [...document.querySelectorAll('#segments li')].map(l => getComputedStyle(l).backgroundColor)",
        vec![],
    );
    assert_eq!(colors, json!(["rgb(23, 105, 47)", "rgb(179, 38, 30)", "rgb(23, 105, 47)"]));
    b.screenshot(&shots.join("segments.png"));
    // The same by double-tap on the feed row (touch).
    b.js("document.getElementById('expand').replaceChildren()", vec![]);
    let row = b.wait_for("#feed li[data-decision='deny']", 5);
    b.gesture(&row, "touch", &[(0, 0), (80, 0)]);
    b.wait_for("#segments li", 20);

    // A write through a symlink chain: long-press its path to see the hops; the one that leaves
    // the workspace is marked.
    let target = sb.ws.join("evil/x.txt");
    let out = pre(&sb, "sess-1", "c3", "Write", json!({ "file_path": target, "content": "hi" }));
    assert_eq!(verdict(&out), "deny", "a write through a symlink out of the workspace");
    b.wait_until(
        "the write appears",
        "return [...document.querySelectorAll('#feed li')].some(l => l.textContent.includes('Write'))",
        20,
    );
    let row = b.wait_for("#feed li:first-child", 5);
    b.click(&row);
    let chip = b.wait_for("#event .chip.path", 20);
    b.gesture(&chip, "touch", &[(0, 900)]);
    b.wait_for("#pathview .hop", 20);
    let hops = b.js("return [...document.querySelectorAll('#pathview .hop')].map(h => h.dataset.escape)", vec![]);
    assert_eq!(hops, json!(["false", "true"]), "evil → sub/hop stays inside; sub/hop → outside escapes");
    let nodes = b.js("return [...document.querySelectorAll('#pathview .pv-node')].map(n => n.dataset.inside)", vec![]);
    assert_eq!(nodes, json!(["true", "true", "false"]));
    assert!(b.find("#pathview .boundary").is_some(), "the workspace boundary ring");
    // The same with a mouse held down.
    b.js("document.getElementById('pathview').replaceChildren()", vec![]);
    let chip = b.wait_for("#event .chip.path", 5);
    b.gesture(&chip, "mouse", &[(0, 900)]);
    b.wait_for("#pathview .hop.escape", 20);
    b.screenshot(&shots.join("symlink-chain.png"));

    // Grants as chips: a temporary one with a draining ring that greys out when it expires.
    for (resource, time) in [("npm test", "4s"), ("cargo test", "2h")] {
        let args = [
            "grant",
            "add",
            "--operator",
            "ann",
            "--tool",
            "Bash",
            "--resource",
            resource,
            "--for",
            time,
            "--reason",
            "tests",
            "--passphrase-stdin",
        ];
        let (code, _, err) = sb.run(&args, &format!("{PASS}\n"));
        assert_eq!(code, 0, "{err}");
    }
    b.wait_until("two grant chips, in force, each with a ring", "return [...document.querySelectorAll('.chip.grant')].filter(c => c.dataset.active === 'true' && c.querySelector('.ring')).length === 2", 20);
    b.screenshot(&shots.join("grants.png"));
    b.wait_until("the short grant greys out", "return [...document.querySelectorAll('.chip.grant')].some(c => c.dataset.active === 'false' && c.classList.contains('expired') && c.textContent.includes('npm test'))", 20);
    let bg = b.js("return getComputedStyle([...document.querySelectorAll('.chip.grant')].find(c => c.textContent.includes('npm test'))).backgroundColor", vec![]);
    assert_eq!(bg, json!("rgb(213, 215, 219)"), "greyed out");
    let long = b.js("return [...document.querySelectorAll('.chip.grant')].find(c => c.textContent.includes('cargo test')).dataset.active", vec![]);
    assert_eq!(long, json!("true"), "the two-hour grant is still in force");

    // A reset: refused without the passphrase and with a wrong one; done with the right one.
    let (code, _, err) = sb.run(&["breaker", "trip", "--to", "stop", "--reason", "browser test"], "");
    assert_eq!(code, 0, "{err}");
    b.wait_until(
        "the breaker shows STOPPED",
        "return document.querySelector('.ladder .current').textContent === 'STOPPED'",
        20,
    );
    let fill = |id: &str, v: &str| b.type_into(&b.wait_for(id, 5), v);
    b.js(
        "const s = document.getElementById('a-action'); s.value = 'reset'; s.dispatchEvent(new Event('change'));",
        vec![],
    );
    fill("#a-reason", "looked at it");
    fill("#a-operator", "ann");
    b.click(&b.wait_for("#a-submit", 5));
    b.wait_until(
        "refused without a passphrase",
        "return document.getElementById('action-result').className === 'err'",
        20,
    );
    fill("#a-passphrase", "not the passphrase");
    b.click(&b.wait_for("#a-submit", 5));
    b.wait_until(
        "refused with a wrong passphrase",
        "return document.getElementById('action-result').textContent.includes('wrong')",
        30,
    );
    fill("#a-passphrase", PASS);
    b.click(&b.wait_for("#a-submit", 5));
    b.wait_until("reset", "return document.getElementById('action-result').className === 'ok'", 30);
    b.wait_until(
        "the breaker shows FULL_AUTO",
        "return document.querySelector('.ladder .current').textContent === 'FULL_AUTO'",
        20,
    );
    let (_, tail, _) = sb.run(&["audit", "tail", "--json", "-n", "5"], "");
    let reset = tail.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).find(|e| e["kind"] == "breaker-reset");
    let reset = reset.unwrap_or_else(|| panic!("no breaker-reset in {tail}"));
    assert_eq!(reset["details"]["operator"], "ann");
    assert_eq!(reset["details"]["reason"], "looked at it");
    b.screenshot(&shots.join("actions.png"));
    b.js("window.scrollTo(0, 0)", vec![]);
    b.screenshot(&shots.join("overview.png"));

    accessibility(&b);
}

/// Keyboard navigation, labels and contrast, checked in the same browser.
fn accessibility(b: &webdriver::Browser) {
    // Every control has a name a screen reader can read.
    let unnamed = b.js(
        "return [...document.querySelectorAll('input, select, button, [tabindex]')].filter(e => {
            const named = (e.labels && e.labels.length) || e.getAttribute('aria-label') || e.getAttribute('aria-labelledby') || e.textContent.trim();
            return !named && !e.closest('[hidden]');
        }).map(e => e.outerHTML.slice(0, 80))",
        vec![],
    );
    assert_eq!(unnamed, json!([]), "controls without a label");
    // Images (the SVGs) are labelled.
    let svgs = b.js("return [...document.querySelectorAll('svg[role=img]')].every(s => s.getAttribute('aria-labelledby') || s.getAttribute('aria-label'))", vec![]);
    assert_eq!(svgs, json!(true));
    // Tab reaches the feed and the action form, in order, from the top of the page.
    b.js("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0);", vec![]);
    let mut seen = Vec::new();
    for _ in 0..60 {
        b.keys("\u{E004}");
        let id = b.js(
            "const a = document.activeElement; return a.id || (a.dataset && a.dataset.key ? 'feed-row' : a.tagName)",
            vec![],
        );
        seen.push(id.as_str().unwrap_or("").to_string());
    }
    for want in ["f-ws", "last-call", "feed-row", "a-action", "a-passphrase", "a-submit"] {
        assert!(seen.iter().any(|s| s == want), "Tab never reached {want}: {seen:?}");
    }
    let pos = |w: &str| seen.iter().position(|s| s == w).unwrap();
    assert!(pos("a-operator") < pos("a-passphrase") && pos("a-passphrase") < pos("a-submit"), "{seen:?}");
    // Enter on a focused feed row opens it.
    b.js("document.querySelector('#feed li').focus()", vec![]);
    b.keys("\u{E007}");
    b.wait_until("Enter opens the event", "return !!document.querySelector('#event dl')", 20);
    // Text contrast: at least 4.5:1 (3:1 for large text) against the background it sits on.
    let low = b.js(include_str!("webdriver/contrast.js"), vec![]);
    assert_eq!(low, json!([]), "text below the WCAG AA contrast ratio");
}
