//! A small W3C WebDriver client for the dashboard's browser tests and benchmark, driving Debian's
//! Chromium through its ChromeDriver.
//!
//! Written here rather than taken from a crate: the WebDriver clients on crates.io (fantoccini,
//! thirtyfour) are async-only and bring their own HTTP and TLS stacks; these tests are
//! synchronous, talk to a ChromeDriver on loopback, and need a dozen endpoints — a few JSON
//! requests over the `ureq` the binary already links.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where Debian puts them (`apt-get install chromium chromium-driver`).
pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// Whether the browser is installed.
pub fn available() -> bool {
    Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists()
}

/// A free TCP port on loopback (bound, then released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A ChromeDriver process and one headless Chromium session.
pub struct Browser {
    driver: Child,
    base: String,
    agent: ureq::Agent,
    _profile: tempfile::TempDir,
}

/// An element reference.
#[derive(Clone, Debug)]
pub struct Element(pub Value);

const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

impl Browser {
    /// Starts ChromeDriver and a headless Chromium (fixed window size, no background network).
    pub fn start() -> Browser {
        let port = free_port();
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(120)))
            .build()
            .into();
        let base = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(mut r) = agent.get(&format!("{base}/status")).call()
                && let Ok(v) = r.body_mut().read_to_string()
                && v.contains("\"ready\":true")
            {
                break;
            }
            assert!(Instant::now() < deadline, "chromedriver did not become ready");
            std::thread::sleep(Duration::from_millis(100));
        }
        let profile = tempfile::tempdir().unwrap();
        let mut b = Browser { driver, base, agent, _profile: profile };
        let caps = json!({ "capabilities": { "alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1100",
                    "--no-first-run", "--disable-background-networking", "--disable-component-update",
                    "--disable-sync", "--disable-default-apps", "--disable-dev-shm-usage",
                    "--enable-precise-memory-info",
                    format!("--user-data-dir={}", b._profile.path().display()),
                ],
            },
        }}});
        let v = b.raw("POST", "/session", Some(caps));
        let id = v["sessionId"].as_str().expect("a session id").to_string();
        b.base = format!("{}/session/{id}", b.base);
        b
    }

    fn raw(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}{path}", self.base);
        let resp = match method {
            "GET" => self.agent.get(&url).call(),
            "DELETE" => self.agent.delete(&url).call(),
            _ => self
                .agent
                .post(&url)
                .header("content-type", "application/json")
                .send(body.unwrap_or(json!({})).to_string()),
        };
        let mut resp = resp.unwrap_or_else(|e| panic!("webdriver {method} {path}: {e}"));
        let status = resp.status();
        let text = resp.body_mut().read_to_string().unwrap_or_default();
        let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        assert!(status.is_success(), "webdriver {method} {path} → {status}: {text}");
        v.get("value")
            .cloned()
            .map_or(v, |value| if path == "/session" { json!({ "sessionId": value["sessionId"] }) } else { value })
    }

    fn cmd(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        self.raw(method, path, body)
    }

    /// Opens a URL.
    pub fn goto(&self, url: &str) {
        self.cmd("POST", "/url", Some(json!({ "url": url })));
    }

    /// Runs a script in the page and returns its value.
    pub fn js(&self, script: &str, args: Vec<Value>) -> Value {
        self.cmd("POST", "/execute/sync", Some(json!({ "script": script, "args": args })))
    }

    /// The first element matching a CSS selector, if any.
    pub fn find(&self, css: &str) -> Option<Element> {
        let url = format!("{}/element", self.base);
        let mut resp = self
            .agent
            .post(&url)
            .header("content-type", "application/json")
            .send(json!({ "using": "css selector", "value": css }).to_string())
            .unwrap();
        let ok = resp.status().is_success();
        let v: Value = serde_json::from_str(&resp.body_mut().read_to_string().unwrap()).unwrap();
        ok.then(|| Element(v["value"].clone()))
    }

    /// Waits (up to `secs`) for an element matching `css`.
    pub fn wait_for(&self, css: &str, secs: u64) -> Element {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(e) = self.find(css) {
                return e;
            }
            assert!(Instant::now() < deadline, "no `{css}` after {secs} s; page: {}", self.text("body"));
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits (up to `secs`) until a script returns true.
    pub fn wait_until(&self, what: &str, script: &str, secs: u64) {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            if self.js(script, vec![]) == json!(true) {
                return;
            }
            assert!(Instant::now() < deadline, "{what}: not after {secs} s; page: {}", self.text("body"));
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn id(e: &Element) -> String {
        e.0[ELEMENT_KEY].as_str().unwrap_or_else(|| panic!("not an element: {}", e.0)).to_string()
    }

    /// Clicks an element.
    pub fn click(&self, e: &Element) {
        self.cmd("POST", &format!("/element/{}/click", Self::id(e)), None);
    }

    /// Types into an element.
    pub fn type_into(&self, e: &Element, text: &str) {
        self.cmd("POST", &format!("/element/{}/clear", Self::id(e)), None);
        self.cmd("POST", &format!("/element/{}/value", Self::id(e)), Some(json!({ "text": text })));
    }

    /// The visible text of the first element matching `css` ("" when none).
    pub fn text(&self, css: &str) -> String {
        self.js("const e = document.querySelector(arguments[0]); return e ? e.innerText : '';", vec![json!(css)])
            .as_str()
            .unwrap_or("")
            .to_string()
    }

    /// A pointer gesture on an element: `kind` is mouse, pen or touch; `steps` is a list of
    /// (down, hold ms) pairs, each ending with the pointer up.
    pub fn gesture(&self, e: &Element, kind: &str, steps: &[(u64, u64)]) {
        let mut actions = vec![json!({ "type": "pointerMove", "duration": 0, "origin": e.0, "x": 0, "y": 0 })];
        for &(gap, hold) in steps {
            if gap > 0 {
                actions.push(json!({ "type": "pause", "duration": gap }));
            }
            actions.push(json!({ "type": "pointerDown", "button": 0 }));
            if hold > 0 {
                actions.push(json!({ "type": "pause", "duration": hold }));
            }
            actions.push(json!({ "type": "pointerUp", "button": 0 }));
        }
        let body = json!({ "actions": [{ "type": "pointer", "id": format!("p-{kind}"), "parameters": { "pointerType": kind }, "actions": actions }] });
        self.cmd("POST", "/actions", Some(body));
        self.cmd("DELETE", "/actions", None);
    }

    /// Presses keys (WebDriver key codes, e.g. "\u{E004}" for Tab).
    pub fn keys(&self, keys: &str) {
        let mut actions = Vec::new();
        for k in keys.chars() {
            actions.push(json!({ "type": "keyDown", "value": k.to_string() }));
            actions.push(json!({ "type": "keyUp", "value": k.to_string() }));
        }
        self.cmd("POST", "/actions", Some(json!({ "actions": [{ "type": "key", "id": "kbd", "actions": actions }] })));
    }

    /// Saves a PNG screenshot of the page.
    pub fn screenshot(&self, to: &Path) {
        use base64::Engine;
        // Let a scroll or a re-render reach the screen first.
        std::thread::sleep(Duration::from_millis(300));
        let v = self.cmd("GET", "/screenshot", None);
        let png = base64::engine::general_purpose::STANDARD.decode(v.as_str().unwrap()).unwrap();
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(to, png).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.agent.delete(&self.base).call();
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// Where the tests save their screenshots.
pub fn screenshot_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/dashboard-screenshots")
}
