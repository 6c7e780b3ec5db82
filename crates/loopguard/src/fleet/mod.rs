//! The fleet (issue 23; docs/fleet.md): many hosts under one set of positions and one audit
//! trail in PostgreSQL. The hook never connects to the database: `loopguard fleet agent` holds
//! the connection, mirrors the fleet's positions into the state home (`fleet/control.json`,
//! which the hook reads as a cap on top of the local breaker) and ships the local audit logs out.
//!
//! What the fleet can do to a host is tighten it. Lifting a fleet position needs a signature by
//! a pinned operator key ([`control`]); the local breaker is never reset or loosened from here.

pub mod agent;
pub mod budget;
pub mod control;
pub mod install;
pub mod reserve;
pub mod schema;
pub mod ship;
pub mod sig;
pub mod verify;

use loopguard_core::policy::FleetSettings;
use std::time::Duration;

/// A fleet member's settings, resolved (the host's name filled in).
#[derive(Debug, Clone)]
pub struct Member {
    /// `[fleet]` as the policy has it.
    pub settings: FleetSettings,
    /// This host's name in the fleet.
    pub host: String,
}

impl Member {
    /// From the policy: `None` when it names no fleet.
    pub fn of(policy: &loopguard_core::Policy) -> Option<Member> {
        let settings = policy.fleet()?.clone();
        let host = settings.host.clone().unwrap_or_else(machine_name);
        Some(Member { settings, host })
    }
}

/// The machine's host name (`/proc/sys/kernel/hostname`), or `localhost`.
fn machine_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// A database error in words (the server's own message and SQLSTATE, not just "db error").
pub fn describe(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(d) => format!("the fleet's database: {} ({})", d.message(), d.code().code()),
        None => format!("the fleet's database: {e}"),
    }
}

/// Connects to the fleet's database (5 s to connect). Over TCP the connection is TLS unless
/// the URL says `sslmode=disable`: PostgreSQL's default `prefer` (which a man in the middle can
/// downgrade to plain text) is taken as `require`, and the server's certificate is verified
/// against Mozilla's roots plus `[fleet] ca_file` (host name included). Unix sockets need none.
pub fn connect(s: &FleetSettings) -> Result<postgres::Client, String> {
    use postgres::config::{Host, SslMode};
    let mut config: postgres::Config =
        s.database_url.parse().map_err(|e| format!("fleet.database_url does not read: {e}"))?;
    config.connect_timeout(Duration::from_secs(5));
    // `hostaddr` is TCP too (and names no host a certificate could be checked against).
    let tcp = config.get_hosts().iter().any(|h| matches!(h, Host::Tcp(_))) || !config.get_hostaddrs().is_empty();
    let socket = config.get_hosts().iter().any(|h| !matches!(h, Host::Tcp(_)));
    if tcp && socket {
        return Err("fleet.database_url mixes a Unix socket and TCP: name one kind of host".into());
    }
    if !config.get_hostaddrs().is_empty() && !matches!(config.get_ssl_mode(), SslMode::Disable) {
        return Err(
            "fleet.database_url gives hostaddr: use host=NAME (the name the server's certificate is checked against)"
                .into(),
        );
    }
    if tcp && matches!(config.get_ssl_mode(), SslMode::Prefer) {
        config.ssl_mode(SslMode::Require);
    }
    let reach = |e: postgres::Error| format!("cannot reach the fleet's database: {}", chain(&e));
    if matches!(config.get_ssl_mode(), SslMode::Disable) || !tcp {
        return config.connect(postgres::NoTls).map_err(reach);
    }
    config.connect(tls(s.ca_file.as_deref())?).map_err(reach)
}

/// An error with its causes ("error performing TLS handshake: invalid peer certificate: …").
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let s = c.to_string();
        if !out.contains(&s) {
            out = format!("{out}: {s}");
        }
        cause = c.source();
    }
    out
}

/// rustls for the fleet's database: Mozilla's roots and the operator's CA file, if any.
fn tls(ca_file: Option<&str>) -> Result<tokio_postgres_rustls::MakeRustlsConnect, String> {
    use rustls_pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    if let Some(path) = ca_file {
        let certs = rustls_pki_types::CertificateDer::pem_file_iter(path)
            .and_then(|it| it.collect::<Result<Vec<_>, _>>())
            .map_err(|e| format!("fleet.ca_file {path}: {e}"))?;
        if certs.is_empty() {
            return Err(format!("fleet.ca_file {path} holds no PEM certificate"));
        }
        for c in certs {
            roots.add(c).map_err(|e| format!("fleet.ca_file {path}: {e}"))?;
        }
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// `fleet stop|set`: sets `scope` (`*` or `group:NAME`) of the fleet to `position`, signed with
/// this state home's key, and wakes every agent (NOTIFY). Returns the new version.
pub fn set_position(
    client: &mut postgres::Client,
    fleet: &str,
    scope: &str,
    position: &str,
    reason: &str,
    key: &loopguard_audit::SigningKey,
) -> Result<i64, String> {
    if control::parse_position(position).is_none() {
        return Err(format!("the position must be full-auto, pr-only, read-only or stopped, found `{position}`"));
    }
    if reason.trim().is_empty() {
        return Err("--reason must say why".into());
    }
    let db = |e: postgres::Error| describe(&e);
    let mut tx = client.transaction().map_err(db)?;
    let version: i64 = tx.query_one("SELECT nextval('loopguard_control_version')", &[]).map_err(db)?.get(0);
    let setting = control::Setting {
        fleet: fleet.into(),
        scope: scope.into(),
        version,
        position: position.into(),
        reason: reason.into(),
        set_by: std::env::var("USER").unwrap_or_else(|_| "unknown".into()),
        set_at: crate::effects::now(),
        key: String::new(),
        sig: String::new(),
    }
    .sign(key);
    // Two settings by one key at once: the newer version wins, the older one is told (never a
    // lower version landing last, which hosts would refuse as a replay). A row another key (or
    // none) wrote is overwritten whatever its version: a planted huge version must not lock
    // the operators out.
    let written = tx.execute(
        "INSERT INTO loopguard_control (fleet, scope, version, position, reason, set_by, set_at, key, sig)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (fleet, scope) DO UPDATE SET version = EXCLUDED.version, position = EXCLUDED.position,
           reason = EXCLUDED.reason, set_by = EXCLUDED.set_by, set_at = EXCLUDED.set_at, key = EXCLUDED.key, sig = EXCLUDED.sig
         WHERE loopguard_control.version < EXCLUDED.version OR loopguard_control.key <> EXCLUDED.key",
        &[
            &setting.fleet,
            &setting.scope,
            &setting.version,
            &setting.position,
            &setting.reason,
            &setting.set_by,
            &setting.set_at,
            &setting.key,
            &setting.sig,
        ],
    )
    .map_err(db)?;
    if written == 0 {
        return Err(format!(
            "another operator set {scope} of fleet `{fleet}` at the same moment; look at `loopguard fleet status` and set it again"
        ));
    }
    tx.execute("SELECT pg_notify('loopguard_control', $1)", &[&fleet]).map_err(db)?;
    tx.commit().map_err(db)?;
    Ok(version)
}

/// Every position row of a fleet.
pub fn settings(client: &mut postgres::Client, fleet: &str) -> Result<Vec<control::Setting>, postgres::Error> {
    Ok(client
        .query(
            "SELECT fleet, scope, version, position, reason, set_by, set_at, key, sig FROM loopguard_control WHERE fleet = $1",
            &[&fleet],
        )?
        .into_iter()
        .map(|r| control::Setting {
            fleet: r.get(0),
            scope: r.get(1),
            version: r.get(2),
            position: r.get(3),
            reason: r.get(4),
            set_by: r.get(5),
            set_at: r.get(6),
            key: r.get(7),
            sig: r.get(8),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(url: &str) -> String {
        let s = FleetSettings { database_url: url.into(), ..FleetSettings::default() };
        connect(&s).err().unwrap_or_default()
    }

    #[test]
    fn urls_that_would_reach_tcp_without_a_checkable_tls_are_refused_before_connecting() {
        assert!(refusal("hostaddr=10.0.0.5 user=x").contains("hostaddr"), "hostaddr is TCP with no name to verify");
        assert!(refusal("host=/run/postgresql hostaddr=10.0.0.5 user=x").contains("mixes"));
        assert!(refusal("host=/run/postgresql,db.example user=x").contains("mixes"));
        assert!(refusal("host=x sslmode=allow").contains("does not read"), "sslmode=allow does not parse");
    }
}
