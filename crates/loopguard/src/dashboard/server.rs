//! The web server: axum on a current-thread tokio runtime, the assets compiled in.

use super::actions::{ActionRequest, Refused};
use super::feed::{self, Workspace};
use super::live::Live;
use super::views;
use crate::audit_cli::Verified;
use crate::control::Target;
use crate::state::Env;
use axum::Router;
use axum::extract::{DefaultBodyLimit, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::stream::{self, Stream, StreamExt};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::broadcast;

const INDEX: &str = include_str!("assets/index.html");
const APP_JS: &str = include_str!("assets/app.js");
const APP_CSS: &str = include_str!("assets/app.css");

/// How often the logs are looked at while a page listens and the kernel cannot tell us when
/// they change (without inotify); with it, this is only the fallback (nothing is read at all while
/// no page listens).
const POLL: Duration = Duration::from_millis(100);
/// The fallback look while inotify is watching.
const POLL_WATCHED: Duration = Duration::from_secs(2);
/// Failed passphrases tolerated per minute before actions are refused outright.
const MAX_FAILURES: usize = 5;

/// What `loopguard dashboard` was asked for.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Where to listen (default 127.0.0.1 on a random port).
    pub bind: Option<SocketAddr>,
    /// Workspaces to show (their logs are found in the state home; naming them tells the
    /// dashboard their roots when no session start recorded them).
    pub workspaces: Vec<PathBuf>,
}

struct Auth {
    /// The one-time token, until redeemed.
    token: Option<String>,
    /// Session secret → when it ends.
    sessions: HashMap<String, Instant>,
    /// When passphrases were wrong, the last minute's.
    failures: Vec<Instant>,
}

struct App {
    env: Env,
    state: PathBuf,
    known: Vec<PathBuf>,
    live: Mutex<Live>,
    /// `Host` headers accepted (none: any, for a bind beyond loopback the user allowed).
    hosts: Option<Vec<String>>,
    auth: Mutex<Auth>,
    tail: Mutex<feed::Tail>,
    paths: Mutex<HashMap<String, Option<PathBuf>>>,
    verified: Mutex<HashMap<String, Verification>>,
    tx: broadcast::Sender<Arc<str>>,
    /// One action at a time: a wrong passphrase is counted before the next guess is checked.
    acting: tokio::sync::Mutex<()>,
    /// Wakes the poller when a page starts listening.
    listening: tokio::sync::Notify,
}

type Shared = Arc<App>;

/// A log's verification and the sizes it was made at.
type Verification = (u64, Result<Verified, String>);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding one of these leaves plain data behind: keep serving.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn random_hex(n: usize) -> Result<String, String> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness for the dashboard's token: {e}"))?;
    Ok(loopguard_audit::hex(&bytes))
}

/// Serves the dashboard until interrupted. Prints the one-time URL on stdout.
pub fn run(env: &Env, opts: Options) -> Result<(), String> {
    let state = env.state_home()?;
    let bind = opts.bind.unwrap_or(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0));
    let cwd = std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?;
    if !bind.ip().is_loopback() {
        let policy = crate::effective::load(env, &env.workspace_for(&cwd))
            .map_err(|e| format!("the policy does not load: {e}"))?;
        if !policy.dashboard_remote_bind() {
            return Err(format!(
                "refusing to listen on {bind}: beyond loopback anyone who can reach it could try the operators' passphrases; set `[dashboard] allow_remote_bind = true` in the user policy to allow it"
            ));
        }
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| format!("cannot start the dashboard's runtime: {e}"))?;
    runtime.block_on(serve(env, state, bind, opts.workspaces))
}

async fn serve(env: &Env, state: PathBuf, bind: SocketAddr, known: Vec<PathBuf>) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind(bind).await.map_err(|e| format!("cannot listen on {bind}: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let token = random_hex(32)?;
    let host =
        if addr.ip().is_unspecified() { SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), addr.port()) } else { addr };
    // The token rides in the fragment: browsers never send it to a server, log it or pass it
    // on as a referrer; the page trades it for a session secret it keeps in sessionStorage.
    let url = format!("http://{host}/#token={token}");
    let hosts = addr.ip().is_loopback().then(|| {
        let p = addr.port();
        vec![format!("127.0.0.1:{p}"), format!("localhost:{p}"), format!("[::1]:{p}"), host.to_string()]
    });
    super::live::sweep(&state);
    let live = Live { pid: std::process::id(), port: addr.port(), url: Some(url.clone()), token: Some(token.clone()) };
    live.write(&state).map_err(|e| format!("cannot write the dashboard's file in the state home: {e}"))?;
    let (tx, _) = broadcast::channel(4096);
    let app = Arc::new(App {
        env: env.clone(),
        state: state.clone(),
        known,
        live: Mutex::new(live),
        hosts,
        auth: Mutex::new(Auth { token: Some(token), sessions: HashMap::new(), failures: Vec::new() }),
        tail: Mutex::new(feed::Tail::default()),
        paths: Mutex::new(HashMap::new()),
        verified: Mutex::new(HashMap::new()),
        tx,
        acting: tokio::sync::Mutex::new(()),
        listening: tokio::sync::Notify::new(),
    });
    println!("loopguard dashboard: open {url}");
    println!(
        "(the link works once; it is also in {} until used)",
        super::live::path(&state, std::process::id()).display()
    );
    use std::io::Write;
    let _ = std::io::stdout().flush();
    tokio::spawn(poll(app.clone()));
    let router = router(app.clone());
    let result = axum::serve(listener, router).with_graceful_shutdown(shutdown()).await;
    let _ = std::fs::remove_file(super::live::path(&state, std::process::id()));
    result.map_err(|e| format!("the dashboard stopped: {e}"))
}

async fn shutdown() {
    use tokio::signal::unix::{SignalKind, signal};
    match (signal(SignalKind::interrupt()), signal(SignalKind::terminate())) {
        (Ok(mut i), Ok(mut t)) => {
            tokio::select! {
                _ = i.recv() => {}
                _ = t.recv() => {}
            }
        }
        // Without signal handling the process ends the plain way (the live file is swept later).
        _ => std::future::pending::<()>().await,
    }
}

fn router(app: Shared) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/api/login", post(login))
        .route("/app.js", get(|| async { asset(APP_JS, "text/javascript; charset=utf-8") }))
        .route("/app.css", get(|| async { asset(APP_CSS, "text/css; charset=utf-8") }))
        .route("/api/overview", get(overview))
        .route("/api/fleet", get(fleet))
        .route("/api/events", get(events))
        .route("/api/call", get(call))
        .route("/api/explain", get(explain))
        .route("/api/path", get(path))
        .route("/api/stream", get(stream))
        .route("/api/action", post(action))
        .layer(DefaultBodyLimit::max(64 * 1024))
        .layer(middleware::from_fn_with_state(app.clone(), guard))
        .with_state(app)
}

fn asset(body: &'static str, kind: &'static str) -> Response {
    ([(header::CONTENT_TYPE, kind)], body).into_response()
}

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, axum::Json(json!({ "error": message.into() }))).into_response()
}

/// An answer that is not the one asked for: a status and why.
#[derive(Debug)]
struct Failure(StatusCode, String);

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        error(self.0, self.1)
    }
}

fn fail(status: StatusCode, message: impl Into<String>) -> Failure {
    Failure(status, message.into())
}

/// The JSON of a result, or its failure.
fn answer(result: Result<Value, Failure>) -> Response {
    match result {
        Ok(v) => axum::Json(v).into_response(),
        Err(f) => f.into_response(),
    }
}

/// The session secret a request carries (`Authorization: Bearer …`). Not a cookie: browsers
/// send a cookie for 127.0.0.1 to every port of it, so any local web server the human visits
/// would receive it; a header set by the page's own script goes only here.
fn session_of(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    value.strip_prefix("Bearer ").map(str::to_string)
}

/// Constant-time equality of two secrets.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Every request: the `Host` must name the dashboard; every API but the login needs a live
/// session; a POST with an `Origin` must come from the dashboard's own. Every answer carries
/// headers that keep it out of frames, caches and other origins.
async fn guard(State(app): State<Shared>, req: Request, next: Next) -> Response {
    let host = req.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("").to_string();
    let mut resp = if app.hosts.as_ref().is_some_and(|hs| !hs.iter().any(|h| h == &host)) {
        error(StatusCode::MISDIRECTED_REQUEST, "this dashboard answers only to its own address")
    } else if let Err(r) = check_session(&app, &req, &host) {
        *r
    } else {
        next.run(req).await
    };
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
        ),
    );
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    resp
}

/// How long a session lasts.
const SESSION: Duration = Duration::from_secs(12 * 3600);

fn check_session(app: &App, req: &Request, host: &str) -> Result<(), Box<Response>> {
    let path = req.uri().path();
    if req.method() != Method::GET {
        let origin = req.headers().get(header::ORIGIN).and_then(|v| v.to_str().ok());
        if origin.is_some_and(|o| o != format!("http://{host}")) {
            return Err(Box::new(error(StatusCode::FORBIDDEN, "the request comes from another origin")));
        }
    }
    // The page and its assets hold no data; everything else is the API.
    if !path.starts_with("/api/") || path == "/api/login" {
        return Ok(());
    }
    let mut auth = lock(&app.auth);
    auth.sessions.retain(|_, until| *until > Instant::now());
    let known = session_of(req.headers()).is_some_and(|s| auth.sessions.keys().any(|k| same(k, &s)));
    if known {
        Ok(())
    } else {
        Err(Box::new(error(
            StatusCode::UNAUTHORIZED,
            "no dashboard session: open the link `loopguard dashboard` printed (each link works once; start the dashboard again for a new one)",
        )))
    }
}

async fn login(State(app): State<Shared>, body: axum::body::Bytes) -> Response {
    let given: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let given = given.get("token").and_then(Value::as_str).unwrap_or("");
    let session = match random_hex(32) {
        Ok(s) => s,
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, e),
    };
    {
        let mut auth = lock(&app.auth);
        if !auth.token.as_deref().is_some_and(|t| same(t, given)) {
            return error(
                StatusCode::FORBIDDEN,
                "this link is wrong or was already used: start `loopguard dashboard` again",
            );
        }
        auth.token = None;
        auth.sessions.insert(session.clone(), Instant::now() + SESSION);
    }
    // The token is spent: it leaves the state home too.
    let live = {
        let mut l = lock(&app.live);
        l.url = None;
        l.token = None;
        l.clone()
    };
    let _ = live.write(&app.state);
    axum::Json(json!({ "session": session })).into_response()
}

async fn index() -> Html<&'static str> {
    Html(INDEX)
}

/// Runs blocking work (file reads, Argon2) off the runtime's thread.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T, Failure> + Send + 'static) -> Result<T, Failure> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| Err(fail(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())))
}

fn workspaces(app: &App) -> Vec<Workspace> {
    feed::workspaces(&app.state, &app.known, &mut lock(&app.paths))
}

fn find(app: &App, key: &str) -> Result<Workspace, Failure> {
    workspaces(app)
        .into_iter()
        .find(|w| w.key == key)
        .ok_or_else(|| fail(StatusCode::NOT_FOUND, format!("no workspace `{key}` in the state home")))
}

/// A log's verification, recomputed when the log or its checkpoints changed (verifying reads
/// the whole log: the page asks at most a few times a second).
fn verified(app: &App, w: &Workspace) -> Result<Verified, String> {
    let size = |p: &std::path::Path| std::fs::metadata(p).map_or(0, |m| m.len());
    let mut checkpoints = w.log.as_os_str().to_os_string();
    checkpoints.push(".checkpoints");
    let len = size(&w.log) ^ size(std::path::Path::new(&checkpoints)).rotate_left(32);
    if let Some((l, v)) = lock(&app.verified).get(&w.key)
        && *l == len
    {
        return v.clone();
    }
    let v = views::verify(&app.state, w);
    lock(&app.verified).insert(w.key.clone(), (len, v.clone()));
    v
}

async fn overview(State(app): State<Shared>) -> Response {
    answer(
        blocking(move || {
            let list: Vec<Value> = workspaces(&app)
                .iter()
                .map(|w| json!(views::workspace(&app.env, &app.state, w, verified(&app, w))))
                .collect();
            Ok(json!({ "now": crate::effects::now(), "workspaces": list }))
        })
        .await,
    )
}

/// The fleet view (a database round trip, off the runtime's thread).
async fn fleet(State(app): State<Shared>) -> Response {
    answer(
        blocking(move || super::fleet_view::view(&app.env).map_err(|e| fail(StatusCode::SERVICE_UNAVAILABLE, e))).await,
    )
}

async fn events(State(app): State<Shared>, Query(q): Query<HashMap<String, String>>) -> Response {
    let limit = q.get("limit").and_then(|l| l.parse::<usize>().ok()).unwrap_or(200).min(2000);
    answer(blocking(move || Ok(json!(feed::recent(&workspaces(&app), limit)))).await)
}

fn ws_seq(q: &HashMap<String, String>) -> Result<(String, u64), Failure> {
    let ws = q.get("ws").cloned().ok_or_else(|| fail(StatusCode::BAD_REQUEST, "`ws` is missing"))?;
    let seq =
        q.get("seq").and_then(|s| s.parse().ok()).ok_or_else(|| fail(StatusCode::BAD_REQUEST, "`seq` is missing"))?;
    Ok((ws, seq))
}

async fn call(State(app): State<Shared>, Query(q): Query<HashMap<String, String>>) -> Response {
    answer(
        blocking(move || {
            let (ws, seq) = ws_seq(&q)?;
            let w = find(&app, &ws)?;
            let (event, call) =
                feed::call(&w, seq).ok_or_else(|| fail(StatusCode::NOT_FOUND, format!("no event {seq}")))?;
            let about = |c: &String| loopguard_core::REASON_CODES.iter().find(|r| r.code == c).map(|r| r.summary);
            let codes: Vec<Value> = event.reasons.iter().map(|c| json!({ "code": c, "about": about(c) })).collect();
            Ok(json!({ "ws": ws, "event": event, "call": call, "codes": codes, "verify": verified(&app, &w) }))
        })
        .await,
    )
}

async fn explain(State(app): State<Shared>, Query(q): Query<HashMap<String, String>>) -> Response {
    answer(
        blocking(move || {
            let (ws, seq) = ws_seq(&q)?;
            let w = find(&app, &ws)?;
            let root = w.path.clone().ok_or_else(|| fail(StatusCode::CONFLICT, "the workspace's root is not known"))?;
            let (_, call) =
                feed::call(&w, seq).ok_or_else(|| fail(StatusCode::NOT_FOUND, format!("no event {seq}")))?;
            let call = call.ok_or_else(|| fail(StatusCode::NOT_FOUND, "no journal record of this call"))?;
            let mut paths = call.action.paths.clone();
            let segments = match &call.action.command {
                Some(cmd) => {
                    let segs = views::segments(&app.env, &app.state, &root, &call.tool, cmd)
                        .map_err(|e| fail(StatusCode::UNPROCESSABLE_ENTITY, e))?;
                    paths.extend(path_words(&segs));
                    segs
                }
                None => Vec::new(),
            };
            paths.dedup();
            Ok(json!({ "ws": ws, "seq": seq, "tool": call.tool, "segments": segments, "paths": paths }))
        })
        .await,
    )
}

/// Words of the segments that look like paths (for the path view).
fn path_words(segs: &[views::SegmentView]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in segs {
        for w in s.text.split_whitespace().skip(1) {
            let w = w.trim_matches('\'');
            let pathy = w.contains('/') && !w.contains("://") && !w.starts_with('-');
            if pathy && !out.iter().any(|o| o == w) {
                out.push(w.to_string());
            }
        }
    }
    out.truncate(32);
    out
}

async fn path(State(app): State<Shared>, Query(q): Query<HashMap<String, String>>) -> Response {
    answer(
        blocking(move || {
            let ws = q.get("ws").cloned().unwrap_or_default();
            let raw = q
                .get("path")
                .filter(|p| !p.is_empty() && p.len() <= 4096)
                .ok_or_else(|| fail(StatusCode::BAD_REQUEST, "`path` is missing or too long"))?;
            let w = find(&app, &ws)?;
            let root = w.path.clone().ok_or_else(|| fail(StatusCode::CONFLICT, "the workspace's root is not known"))?;
            let chain =
                views::path_chain(&app.env, &root, raw).map_err(|e| fail(StatusCode::UNPROCESSABLE_ENTITY, e))?;
            Ok(json!(chain))
        })
        .await,
    )
}

async fn stream(State(app): State<Shared>) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    // Subscribe first, then make sure the tail follows from now: the page loads what came
    // before with /api/events after this `hello` (it drops the duplicates).
    let rx = app.tx.subscribe();
    app.listening.notify_one();
    {
        let mut tail = lock(&app.tail);
        if !tail.warm {
            tail.warm(&app.state);
        }
    }
    let hello = stream::once(async { Ok(Event::default().event("hello").data("{}")) });
    let rest = stream::unfold(rx, |mut rx| async move {
        match rx.recv().await {
            Ok(msg) => Some((Ok(Event::default().data(&*msg)), rx)),
            Err(broadcast::error::RecvError::Lagged(n)) => {
                Some((Ok(Event::default().event("lagged").data(n.to_string())), rx))
            }
            Err(broadcast::error::RecvError::Closed) => None,
        }
    });
    Sse::new(hello.chain(rest)).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

/// Follows the logs while a page listens; sends each new event, and `state` when the breaker
/// files or the logs changed (the page then reloads its panels). Woken by inotify when a file in
/// `audit/` or `breaker/` changes; asleep while no page listens.
async fn poll(app: Shared) {
    let watch = watch(&app.state);
    loop {
        if app.tx.receiver_count() == 0 {
            lock(&app.tail).warm = false;
            app.listening.notified().await;
            continue;
        }
        let (items, changed) = {
            let mut tail = lock(&app.tail);
            if !tail.warm {
                tail.warm(&app.state);
            }
            tail.poll(&app.state)
        };
        for item in items {
            if let Ok(s) = serde_json::to_string(&json!({ "type": "event", "item": item })) {
                let _ = app.tx.send(Arc::from(s));
            }
        }
        if changed {
            let _ = app.tx.send(Arc::from(r#"{"type":"state"}"#));
        }
        match &watch {
            Some(changed) => {
                tokio::select! {
                    _ = changed.notified() => {
                        // A hook call writes the log, its head and the journal within
                        // microseconds: wait a moment so one look sees them all.
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                    _ = tokio::time::sleep(POLL_WATCHED) => {}
                }
            }
            None => tokio::time::sleep(POLL).await,
        }
    }
}

/// An inotify watch on the state home's `audit/` and `breaker/` (created if missing, 0700, as
/// their writers create them), read by a thread of its own that blocks in `read` and wakes the
/// poller on every change; `None` where the kernel refuses, and the poller then polls.
fn watch(state: &std::path::Path) -> Option<Arc<tokio::sync::Notify>> {
    use rustix::fs::inotify::{self, CreateFlags, WatchFlags};
    let fd = inotify::init(CreateFlags::CLOEXEC).ok()?;
    let flags = WatchFlags::MODIFY | WatchFlags::CREATE | WatchFlags::MOVED_TO | WatchFlags::CLOSE_WRITE;
    for dir in ["audit", "breaker"] {
        let d = state.join(dir);
        loopguard_audit::create_private_dir(&d).ok()?;
        inotify::add_watch(&fd, &d, flags).ok()?;
    }
    let changed = Arc::new(tokio::sync::Notify::new());
    let wake = changed.clone();
    std::thread::Builder::new()
        .name("dashboard-watch".into())
        .spawn(move || {
            // The events' content does not matter: any change means look.
            let mut buf = [0u8; 4096];
            while matches!(rustix::io::read(&fd, &mut buf), Ok(n) if n > 0) {
                wake.notify_one();
            }
        })
        .ok()?;
    Some(changed)
}

async fn action(State(app): State<Shared>, body: axum::body::Bytes) -> Response {
    let req: ActionRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => return error(StatusCode::BAD_REQUEST, format!("the action does not read: {e}")),
    };
    let _one_at_a_time = app.acting.lock().await;
    {
        let mut auth = lock(&app.auth);
        auth.failures.retain(|t| t.elapsed() < Duration::from_secs(60));
        if auth.failures.len() >= MAX_FAILURES {
            return error(StatusCode::TOO_MANY_REQUESTS, "too many wrong passphrases; wait a minute");
        }
    }
    let app2 = app.clone();
    let result = blocking(move || {
        let w = find(&app2, &req.ws)?;
        let workspace = w.path.ok_or_else(|| fail(StatusCode::CONFLICT, "the workspace's root is not known"))?;
        let t = Target { workspace, key: w.key, state: app2.state.clone() };
        Ok(super::actions::perform(&app2.env, &t, &req))
    })
    .await;
    match result {
        Ok(Ok(message)) => {
            let _ = app.tx.send(Arc::from(r#"{"type":"state"}"#));
            axum::Json(json!({ "message": message })).into_response()
        }
        Ok(Err(Refused::Credentials(e))) => {
            lock(&app.auth).failures.push(Instant::now());
            // Each wrong guess costs a second on top of Argon2's own cost.
            tokio::time::sleep(Duration::from_secs(1)).await;
            error(StatusCode::FORBIDDEN, e)
        }
        Ok(Err(Refused::Other(e))) => error(StatusCode::BAD_REQUEST, e),
        Err(f) => f.into_response(),
    }
}
