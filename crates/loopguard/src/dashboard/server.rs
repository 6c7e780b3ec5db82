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

/// How often the logs are looked at while a page listens (nothing is read while none does).
const POLL: Duration = Duration::from_millis(100);
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
    /// Session id → its CSRF token.
    sessions: HashMap<String, String>,
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
    let url = format!("http://{host}/login?token={token}");
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
        .route("/login", get(login))
        .route("/app.js", get(|| async { asset(APP_JS, "text/javascript; charset=utf-8") }))
        .route("/app.css", get(|| async { asset(APP_CSS, "text/css; charset=utf-8") }))
        .route("/api/overview", get(overview))
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

fn session_of(headers: &HeaderMap) -> Option<String> {
    let cookies = headers.get(header::COOKIE)?.to_str().ok()?;
    cookies.split(';').find_map(|c| c.trim().strip_prefix("lg_session=")).map(str::to_string)
}

/// Constant-time equality of two secrets.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Every request: the `Host` must name the dashboard; everything but the login and the assets
/// needs a session; a POST needs the session's CSRF token and a matching `Origin`. Every answer
/// carries headers that keep it out of frames, caches and other origins.
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

fn check_session(app: &App, req: &Request, host: &str) -> Result<(), Box<Response>> {
    let path = req.uri().path();
    if matches!(path, "/login" | "/app.js" | "/app.css") {
        return Ok(());
    }
    let auth = lock(&app.auth);
    let csrf = session_of(req.headers()).and_then(|s| auth.sessions.get(&s).cloned());
    let Some(csrf) = csrf else {
        return Err(Box::new(if path == "/" {
            (StatusCode::UNAUTHORIZED, Html(LOGGED_OUT)).into_response()
        } else {
            error(StatusCode::UNAUTHORIZED, "no dashboard session: open the link `loopguard dashboard` printed")
        }));
    };
    if req.method() != Method::GET {
        let given = req.headers().get("x-csrf-token").and_then(|v| v.to_str().ok()).unwrap_or("");
        if !same(given, &csrf) {
            return Err(Box::new(error(StatusCode::FORBIDDEN, "missing or wrong CSRF token")));
        }
        let origin = req.headers().get(header::ORIGIN).and_then(|v| v.to_str().ok());
        if origin.is_some_and(|o| o != format!("http://{host}")) {
            return Err(Box::new(error(StatusCode::FORBIDDEN, "the request comes from another origin")));
        }
    }
    Ok(())
}

const LOGGED_OUT: &str = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>loopguard dashboard</title></head><body><main><h1>loopguard dashboard</h1><p>No session. Open the one-time link that <code>loopguard dashboard</code> printed; to get a new one, start the dashboard again.</p></main></body></html>";

async fn login(State(app): State<Shared>, Query(q): Query<HashMap<String, String>>) -> Response {
    let given = q.get("token").map(String::as_str).unwrap_or("");
    let (session, csrf) = match (random_hex(32), random_hex(32)) {
        (Ok(s), Ok(c)) => (s, c),
        (Err(e), _) | (_, Err(e)) => return error(StatusCode::INTERNAL_SERVER_ERROR, e),
    };
    {
        let mut auth = lock(&app.auth);
        if !auth.token.as_deref().is_some_and(|t| same(t, given)) {
            return (StatusCode::FORBIDDEN, Html(LOGGED_OUT)).into_response();
        }
        auth.token = None;
        auth.sessions.insert(session.clone(), csrf);
    }
    // The token is spent: it leaves the state home too.
    let live = {
        let mut l = lock(&app.live);
        l.url = None;
        l.token = None;
        l.clone()
    };
    let _ = live.write(&app.state);
    let cookie = format!("lg_session={session}; HttpOnly; SameSite=Strict; Path=/");
    (StatusCode::SEE_OTHER, [(header::LOCATION, "/".to_string()), (header::SET_COOKIE, cookie)]).into_response()
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

async fn overview(State(app): State<Shared>, headers: HeaderMap) -> Response {
    let csrf = session_of(&headers).and_then(|s| lock(&app.auth).sessions.get(&s).cloned());
    answer(
        blocking(move || {
            let list: Vec<Value> = workspaces(&app)
                .iter()
                .map(|w| json!(views::workspace(&app.env, &app.state, w, verified(&app, w))))
                .collect();
            Ok(json!({ "csrf": csrf, "now": crate::effects::now(), "workspaces": list }))
        })
        .await,
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
            Ok(json!({ "ws": ws, "event": event, "call": call, "codes": codes }))
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
/// files or the logs changed (the page then reloads its panels).
async fn poll(app: Shared) {
    loop {
        if app.tx.receiver_count() == 0 {
            lock(&app.tail).warm = false;
            tokio::time::sleep(Duration::from_millis(250)).await;
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
        tokio::time::sleep(POLL).await;
    }
}

async fn action(State(app): State<Shared>, body: axum::body::Bytes) -> Response {
    let req: ActionRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => return error(StatusCode::BAD_REQUEST, format!("the action does not read: {e}")),
    };
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
