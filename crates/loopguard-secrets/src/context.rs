//! Secrets that are secret by *context*: a value after a name that says "password", "token",
//! "api key"; an `Authorization` header; a client's password flag; a connection string's
//! `Password=`; the `data:` of a Kubernetes Secret. No regex can say what such a value looks
//! like, so this module weighs the name (split into words, the way each language writes it)
//! against the value (quoted or bare, its length, alphabet and entropy, and everything that
//! shows it is *not* a literal secret: a placeholder, a variable reference, code, a path, a
//! hash).
//!
//! It runs on the lines around a prefilter hit (the scanner's keyword automaton holds
//! [`KEYWORDS`]) and never on the whole text, so its cost follows the number of hits.

use crate::rules::Severity;
use crate::values::decode_base64;
use std::ops::Range;

/// Lowercase literals inside the *name* of a contextual secret: a hit is looked at as the
/// identifier around it.
pub(crate) const NAME_KEYWORDS: &[&str] = &[
    "_pw",
    "pass",
    "pwd",
    "secret",
    "token",
    "key",
    "auth",
    "credential",
    "creds",
    "bearer",
    "basic",
    "private",
    "-u ",
    "--user",
    "sig=",
    "signature=",
];

/// Lowercase literals elsewhere on the line of a contextual secret (a database client's name
/// before its `-pSECRET`, a Kubernetes Secret's kind): the whole line is looked at.
pub(crate) const LINE_KEYWORDS: &[&str] = &[
    "kind: secret",
    "\"kind\": \"secret\"",
    "mysql",
    "mariadb",
    "sshpass",
    "redis-cli",
    "mongo",
    "docker login",
    "podman login",
    "htpasswd",
    "sqlcmd",
    "ldapsearch",
    "ldapmodify",
    "ldapadd",
    "ldapdelete",
    "ldapwhoami",
    "ldappasswd",
    "keytool",
    "zip -p",
    "7z ",
    "7za ",
    "twine",
    "az login",
    "-passin",
    "-passout",
    "smbclient",
];

/// One contextual finding: where the value is and what kind it is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Found {
    pub span: Range<usize>,
    pub kind: &'static Kind,
}

/// A kind of contextual secret.
#[derive(Debug, PartialEq)]
pub struct Kind {
    /// Stable id (also the redaction label).
    pub id: &'static str,
    /// What it is.
    pub description: &'static str,
    /// How bad.
    pub severity: Severity,
}

/// A password after a password-like name.
pub const PASSWORD: Kind = Kind {
    id: "generic-password",
    description: "Password assigned to a password-like name (high if it looks machine-made, else medium)",
    severity: Severity::High,
};
/// A password that looks like a word rather than a machine-made value (`hunter2xyz`): the same
/// kind, weighed less, so a test fixture's password asks only with others.
pub const PASSWORD_WORDLIKE: Kind = Kind { severity: Severity::Medium, ..PASSWORD };
/// A random value after a secret, token or API-key name.
pub const ASSIGNMENT: Kind = Kind {
    id: "generic-secret-assignment",
    description: "Secret, token or API key assigned in code, config, shell or JSON",
    severity: Severity::High,
};
/// A random value after a name that only says "key".
pub const WEAK_KEY: Kind = Kind {
    id: "generic-key-assignment",
    description: "Random value assigned to a key-like name",
    severity: Severity::Medium,
};
/// `Authorization: Bearer|Basic|Token …`, `X-Api-Key: …`.
pub const AUTH_HEADER: Kind = Kind {
    id: "authorization-header",
    description: "Authorization header with a Bearer, Basic or token credential",
    severity: Severity::High,
};
/// A command-line client's password or token option.
pub const CLI: Kind = Kind {
    id: "cli-credential",
    description: "Password or token on a command line (--password, -p for database clients, -u user:pass)",
    severity: Severity::High,
};
/// An AWS secret access key next to a name that says so.
pub const AWS_SECRET: Kind =
    Kind { id: "aws-secret-access-key", description: "AWS secret access key", severity: Severity::Critical };
/// A value in the `data:` of a Kubernetes Secret.
pub const K8S_SECRET: Kind = Kind {
    id: "kubernetes-secret-data",
    description: "Secret value in a Kubernetes Secret manifest (base64 data)",
    severity: Severity::High,
};

/// Every contextual kind (for reports and the rule listing).
pub const KINDS: &[&Kind] = &[&PASSWORD, &ASSIGNMENT, &WEAK_KEY, &AUTH_HEADER, &CLI, &AWS_SECRET, &K8S_SECRET];

/// What a name says about the value assigned to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum NameClass {
    /// Only says "key" (`key`, `signing_key` is strong): the value must look random.
    WeakKey,
    /// Token, secret, API key, access key, credential.
    Secret,
    /// Password, passphrase, passwd, pwd.
    Password,
}

/// Words that, after the secret noun, make the name about the secret rather than the secret
/// (`token_url`, `password_length`, `key_id`).
const META_AFTER: &[&str] = &[
    "id",
    "ids",
    "name",
    "names",
    "type",
    "types",
    "file",
    "files",
    "path",
    "paths",
    "dir",
    "url",
    "urls",
    "uri",
    "endpoint",
    "length",
    "len",
    "size",
    "count",
    "max",
    "min",
    "limit",
    "field",
    "fields",
    "policy",
    "policies",
    "regex",
    "regexp",
    "pattern",
    "hint",
    "label",
    "prompt",
    "placeholder",
    "message",
    "msg",
    "error",
    "errors",
    "enabled",
    "required",
    "format",
    "version",
    "expiry",
    "expires",
    "expiration",
    "expired",
    "ttl",
    "timeout",
    "header",
    "param",
    "params",
    "parameter",
    "env",
    "var",
    "variable",
    "ref",
    "reference",
    "arn",
    "hash",
    "hashed",
    "digest",
    "checksum",
    "fingerprint",
    "sha",
    "mode",
    "source",
    "store",
    "manager",
    "provider",
    "service",
    "helper",
    "validator",
    "validation",
    "generator",
    "changed",
    "updated",
    "created",
    "at",
    "date",
    "time",
    "index",
    "idx",
    "location",
    "bucket",
    "prefix",
    "suffix",
    "algorithm",
    "alg",
    "method",
    "scheme",
    "kind",
    "class",
    "schema",
    "spec",
    "cache",
    "lifetime",
    "rotation",
    "strength",
    "reset",
    "confirm",
    "confirmation",
    "input",
    "box",
    "visible",
    "visibility",
    "toggle",
    "icon",
    "button",
    "text",
    "key",
    "keys",
    "server",
    "usage",
    "budget",
    "limits",
    "type_",
    "attribute",
    "attr",
    "column",
    "col",
    "table",
    "secret",
    "mount",
    "volume",
    "annotation",
    "id_",
    "list",
    "map",
    "set",
    "bytes",
    "bits",
    "encoding",
    "encoder",
    "decoder",
    "parser",
    "lexer",
    "stream",
    "kind_",
    "callback",
    "handler",
    "request",
    "response",
    "resp",
    "req",
    "query",
    "view",
    "form",
    "page",
    "widget",
    "component",
    "rule",
    "rules",
    "check",
    "checker",
    "test",
    "spec_",
];

/// Words right before the noun that make any name about something that is not a credential
/// (`max_tokens`, `next_token`, `show_password`, `csrf_token`, `public_key`).
const META_BEFORE: &[&str] = &[
    "public",
    "pub",
    "max",
    "min",
    "num",
    "number",
    "total",
    "count",
    "is",
    "has",
    "use",
    "uses",
    "require",
    "requires",
    "show",
    "hide",
    "enable",
    "enabled",
    "allow",
    "no",
    "without",
    "next",
    "page",
    "continuation",
    "cursor",
    "pagination",
    "sync",
    "csrf",
    "xsrf",
    "cancellation",
    "cancel",
    "lexer",
    "parser",
    "prompt",
    "completion",
    "commit",
    "forgot",
    "reset",
    "change",
    "confirm",
    "repeat",
    "check",
    "verify",
    "verification",
    "dummy",
    "fake",
    "mock",
    "example",
    "sample",
    "sentence",
    "word",
    "special",
    "eos",
    "bos",
    "pad",
    "unk",
    "sep",
    "cls",
    "mask",
    "foo",
    "contains",
    "get",
    "remove",
    "insert",
    "delete",
    "find",
    "exists",
    "parse",
    "read",
    "load",
    "gen",
    "make",
    "create",
    "each",
    "iter",
    "missing",
    "invalid",
    "wrong",
    "bad",
    "empty",
    "publishable",
    "anon",
    "site",
    "search",
    "hashed",
    "encrypted_",
    "hash",
];

/// Words right before a bare `key` that make it the key of an index, not a credential
/// (`cache_key`, `sort_key`, `build_key`, `translation_key`).
const KEY_META_BEFORE: &[&str] = &[
    "sort",
    "partition",
    "foreign",
    "cache",
    "idempotency",
    "object",
    "row",
    "lookup",
    "dedup",
    "event",
    "message",
    "route",
    "group",
    "node",
    "item",
    "entry",
    "column",
    "table",
    "map",
    "dict",
    "hot",
    "short",
    "index",
    "file",
    "config",
    "setting",
    "settings",
    "translation",
    "i18n",
    "l10n",
    "locale",
    "metadata",
    "meta",
    "tag",
    "field",
    "json",
    "state",
    "query",
    "shard",
    "unique",
    "composite",
    "natural",
    "surrogate",
    "label",
    "sorting",
    "order",
    "dictionary",
    "hotkey",
    "shortcut",
    "keyboard",
    "press",
    "pressed",
    "up",
    "down",
    "build",
    "gpg",
    "pgp",
    "ssh",
    "host",
    "registry",
    "kv",
    "first",
    "last",
    "start",
    "end",
    "from",
    "to",
    "into",
    "as",
    "by",
    "for",
    "of",
    "on",
    "with",
    "input",
    "output",
    "request",
    "response",
    "default",
    "new",
    "old",
    "test",
    "bucket",
    "s3",
    "redis",
    "memcache",
    "memcached",
    "idx",
    "id",
    "name",
];

/// Qualifiers that make a bare "key" a credential (`api_key`, `signing_key`).
const STRONG_KEY: &[&str] = &[
    "api",
    "access",
    "secret",
    "private",
    "auth",
    "master",
    "signing",
    "sign",
    "encryption",
    "encrypt",
    "enc",
    "app",
    "client",
    "account",
    "shared",
    "sharedaccess",
    "subscription",
    "license",
    "licence",
    "hmac",
    "admin",
    "rest",
    "consumer",
    "service",
    "write",
    "ingest",
    "ingestion",
    "sdk",
    "session",
    "jwt",
    "crypto",
    "cipher",
    "aes",
    "storage",
    "deploy",
    "server",
    "dev",
    "developer",
    "live",
    "prod",
    "production",
    "mgmt",
    "management",
    "webhook",
    "integration",
    "personal",
    "project",
    "org",
    "organization",
    "user",
    "app_",
    "x",
    "license_",
    "product",
    "partner",
    "merchant",
    "restricted",
    "root",
    "cloud",
    "bot",
    "primary",
    "secondary",
    "instance",
    "function",
    "host",
    "tenant",
];

/// Words before a short `pass`/`pw` that make it a password: who or what logs in.
const CREDENTIAL_OWNERS: &[&str] = &[
    "become",
    "sudo",
    "ansible",
    "bind",
    "rpc",
    "jmx",
    "sentinel",
    "replica",
    "broker",
    "vnc",
    "rdp",
    "smb",
    "cifs",
    "db",
    "database",
    "user",
    "usr",
    "admin",
    "root",
    "smtp",
    "mail",
    "email",
    "imap",
    "pop",
    "ftp",
    "sftp",
    "sql",
    "mysql",
    "pg",
    "postgres",
    "psql",
    "redis",
    "mongo",
    "mongodb",
    "proxy",
    "ldap",
    "login",
    "auth",
    "basic",
    "app",
    "api",
    "service",
    "svc",
    "account",
    "acct",
    "wifi",
    "vpn",
    "ssh",
    "keystore",
    "truststore",
    "store",
    "key",
    "cert",
    "private",
    "master",
    "sa",
    "rabbit",
    "rabbitmq",
    "amqp",
    "mq",
    "kafka",
    "es",
    "elastic",
    "http",
    "registry",
    "docker",
    "git",
    "npm",
    "nexus",
    "jenkins",
    "sonar",
    "grafana",
    "keycloak",
    "oauth",
    "client",
    "bind",
    "my",
    "your",
    "web",
    "site",
    "server",
    "host",
    "remote",
    "default",
    "initial",
    "super",
    "sys",
    "system",
    "oracle",
    "mssql",
    "secret",
    "token",
    "jks",
    "p12",
    "pfx",
    "zip",
    "archive",
    "encryption",
    "enc",
    "wallet",
    "vault",
];

/// Suffix words after the noun that leave it a credential (`SECRET_KEY_BASE`, `DB_PASSWORD_PROD`).
const NEUTRAL_AFTER: &[&str] = &[
    "value",
    "val",
    "str",
    "string",
    "b64",
    "base64",
    "raw",
    "plain",
    "plaintext",
    "data",
    "base",
    "prod",
    "production",
    "dev",
    "staging",
    "stage",
    "qa",
    "live",
    "local",
    "main",
    "primary",
    "secondary",
    "backup",
    "v1",
    "v2",
    "v3",
    "1",
    "2",
    "3",
    "0",
    "encoded",
    "hex",
    "enc",
    "encrypted",
    "override",
    "default",
    "current",
    "global",
    "admin",
    "root",
    "user",
    "ro",
    "rw",
    "read",
    "write",
    "bytes_",
    "sandbox",
    "test_",
];

/// Splits an identifier into lowercase words: `dbPassword` → db, password; `API_KEY` → api,
/// key; `x-api-key` → x, api, key; `APIKey` → api, key; `password2` → password, 2.
pub fn words(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if !cur.is_empty()
            && let Some(&p) = i.checked_sub(1).and_then(|k| chars.get(k))
        {
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            let boundary = (p.is_ascii_lowercase() && c.is_ascii_uppercase())
                || (p.is_ascii_uppercase() && c.is_ascii_uppercase() && next_lower)
                || (p.is_ascii_alphabetic() && c.is_ascii_digit())
                || (p.is_ascii_digit() && c.is_ascii_alphabetic());
            if boundary {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.push(c.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The secret noun a single word is or ends with, and the qualifier glued before it
/// (`dbpassword` → password; `apikey` → key qualified by `api`).
fn noun_of(word: &str) -> Option<(NameClass, &str)> {
    const PASSWORDS: &[&str] = &["password", "passwd", "passphrase", "passcode", "pwd", "pass", "pw", "psk"];
    const SECRETS: &[&str] = &["secret", "token", "credential", "credentials", "creds", "apikey", "auth"];
    for p in PASSWORDS {
        if word == *p || (p.len() >= 6 && word.ends_with(p)) {
            return Some((NameClass::Password, &word[..word.len() - p.len()]));
        }
    }
    for s in SECRETS {
        if word == *s || (s.len() >= 5 && s != &"auth" && word.ends_with(s)) {
            return Some((NameClass::Secret, &word[..word.len() - s.len()]));
        }
    }
    if let Some(q) = word.strip_suffix("key") {
        if q.is_empty() {
            return Some((NameClass::WeakKey, ""));
        }
        if STRONG_KEY.contains(&q) {
            return Some((NameClass::Secret, q));
        }
    }
    None
}

/// What `name` says about its value, or `None` when it names no credential.
pub fn classify_name(name: &str) -> Option<NameClass> {
    let name = name.trim_start_matches(['-', '$', '@', '_', ':', '.']);
    // Servers' own words for it: redis.conf `requirepass`, `masterauth`.
    if ["requirepass", "masterauth", "masterpassword"].iter().any(|n| name.eq_ignore_ascii_case(n)) {
        return Some(NameClass::Password);
    }
    // A dotted path names its last part: `config.api_key`, `spring.datasource.password`.
    let mut parts = name.rsplit('.');
    let last = parts.next().unwrap_or(name);
    // `api.key`, `stripe.secret`: a bare last part takes its qualifier from the part before.
    if last.eq_ignore_ascii_case("key")
        && let Some(prev) = parts.next()
        && !prev.is_empty()
    {
        return classify_name(&format!("{prev}_{last}"));
    }
    let name = last;
    if name.len() > 80 {
        return None;
    }
    let ws = words(name);
    // The last word that is (or ends with) a secret noun decides.
    let (i, (mut class, glued)) = ws.iter().enumerate().rev().find_map(|(i, w)| noun_of(w).map(|n| (i, n)))?;
    let before = ws.get(..i).unwrap_or_default();
    if ws[i].as_str() == "pass" || ws[i].as_str() == "pw" {
        // Short forms are nouns only as a whole word at the end, and after a word that owns a
        // credential (`db_pass`, `SMTP_PW`, `pass` alone), not `pass_through`, `onePass`,
        // `render_pass`.
        if i + 1 != ws.len() || before.last().is_some_and(|w| !CREDENTIAL_OWNERS.contains(&w.as_str())) {
            return None;
        }
    }
    if class == NameClass::Secret && ws[i] == "auth" && i + 1 != ws.len() {
        // `auth_url`, `auth_mode`: about the authentication. `auth` alone is a credential.
        return None;
    }
    if class == NameClass::WeakKey && before.last().is_some_and(|w| w.len() >= 3 || STRONG_KEY.contains(&w.as_str())) {
        // `MAPBOX_KEY`, `stripeKey`, `signing_key`: a key of something is a credential unless
        // the word before says otherwise (`cache_key`, `sort_key`, `public_key`: below).
        class = NameClass::Secret;
    }
    if class == NameClass::WeakKey && before.iter().any(|w| noun_of(w).is_some_and(|(c, _)| c != NameClass::WeakKey)) {
        // `secret_key`, `token_key`.
        class = NameClass::Secret;
    }
    for w in &ws[i + 1..] {
        if META_AFTER.contains(&w.as_str()) {
            return None;
        }
        if !NEUTRAL_AFTER.contains(&w.as_str()) && w.len() > 8 {
            return None;
        }
    }
    // Only the word right before the noun (or glued to it) says what the noun is about:
    // `EMAIL_HOST_PASSWORD`, `TEST_API_KEY`, `NODE_AUTH_TOKEN` are credentials.
    let right_before = if glued.is_empty() { before.last().map(String::as_str) } else { Some(glued) };
    if right_before.is_some_and(|w| META_BEFORE.contains(&w)) {
        return None;
    }
    if ws[i].ends_with("key")
        && !STRONG_KEY.contains(&glued)
        && glued.is_empty()
        && before.last().is_some_and(|w| KEY_META_BEFORE.contains(&w.as_str()) && !STRONG_KEY.contains(&w.as_str()))
    {
        return None;
    }
    Some(class)
}

/// Whether an environment variable name names a credential (for `loopguard exec`'s scrub).
pub fn is_secret_name(name: &str) -> bool {
    classify_name(name).is_some_and(|c| c != NameClass::WeakKey) || {
        let u = name.to_ascii_uppercase();
        ["DATABASE_URL", "DSN", "CONNECTION_STRING", "CONN_STR"].iter().any(|s| u.ends_with(s))
    }
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// Every contextual secret in `text[window]` (a line or a few lines around a keyword hit).
pub(crate) fn find(text: &str, window: Range<usize>, out: &mut Vec<Found>) {
    let bytes = text.as_bytes();
    let mut i = window.start;
    while i < window.end {
        if !is_ident_byte(bytes[i]) || (i > window.start && is_ident_byte(bytes[i - 1])) {
            i += 1;
            continue;
        }
        let start = i;
        while i < window.end && is_ident_byte(bytes[i]) {
            i += 1;
        }
        i = at_name(text, start, i, window.end, out).max(i);
    }
}

/// The contextual secret at the identifier around `at` (a keyword hit), if any; `line_end`
/// bounds the search. Returns where the identifier (or the secret found after it) ends, so
/// that a caller with several hits in one name or value looks at it once.
pub(crate) fn find_at(text: &str, at: usize, line_end: usize, out: &mut Vec<Found>) -> usize {
    let bytes = text.as_bytes();
    let line_start = text[..at].rfind('\n').map_or(0, |k| k + 1);
    let mut start = at;
    while start > line_start && is_ident_byte(bytes[start - 1]) {
        start -= 1;
    }
    let mut end = at;
    while end < line_end && is_ident_byte(bytes[end]) {
        end += 1;
    }
    at_name(text, start, end, line_end, out).max(end)
}

/// The contextual secret named by the identifier `text[start..end]`, searched up to `limit`.
fn at_name(text: &str, mut start: usize, end: usize, limit: usize, out: &mut Vec<Found>) -> usize {
    let bytes = text.as_bytes();
    // A diff's removed line: `-API_KEY=…` is the name `API_KEY`.
    if bytes[start] == b'-' && (start == 0 || bytes[start - 1] == b'\n') && end > start + 1 && bytes[start + 1] != b'-'
    {
        start += 1;
    }
    let name = &text[start..end];
    if inside_value(text, start) {
        return end;
    }
    // Most identifiers name nothing secret: decide that without allocating.
    if !KEYWORD_STEMS.iter().any(|k| contains_ci(name.as_bytes(), k.as_bytes())) {
        return end;
    }
    let found = |out: &mut Vec<Found>, f: Found| {
        let e = f.span.end;
        out.push(f);
        e
    };
    for scheme in ["bearer", "basic"] {
        // A scheme followed by a credential: `Bearer abc…` anywhere (logs, headers).
        if name.eq_ignore_ascii_case(scheme)
            && let Some(f) = scheme_value(text, end, limit, scheme)
        {
            return found(out, f);
        }
    }
    if let Some(f) = cli_value(text, start, end, limit) {
        return found(out, f);
    }
    if name.eq_ignore_ascii_case("identified") {
        return identified_by(text, end, limit).map_or(end, |f| found(out, f));
    }
    if name.starts_with('-') && !name.starts_with("--") {
        return end;
    }
    if let Some(f) = header_value(text, name, end, limit) {
        return found(out, f);
    }
    let query = start > 0 && matches!(bytes[start - 1], b'?' | b'&');
    let signed = query
        && ["sig", "signature", "x-amz-signature", "x-goog-signature", "x-amz-security-token"]
            .iter()
            .any(|n| name.eq_ignore_ascii_case(n));
    if !could_assign(text, start, end, limit) {
        // Most names are used, not assigned to (`token.kind()`, `keys.len()`): no value follows.
        return end;
    }
    let Some(class) = classify_name(name).or(signed.then_some(NameClass::Secret)) else { return end };
    let class = two_word_key(text, start, class);
    // A Markdown table whose header names the column: every row's cell in it.
    if let Some(n) = table_column(text, start, end, class, name, out) {
        return n;
    }
    // Shell defaults: `${API_KEY:-literal}`, `${TOKEN:=literal}`.
    if start > 1 && &bytes[start - 2..start] == b"${" {
        return shell_default(text, end, limit, name, class).map_or(end, |f| found(out, f));
    }
    if let Some((span, quoted, op)) = assigned_value(text, start, end, limit) {
        let value = &text[span.clone()];
        if let Some(kind) = judge(name, class, value, quoted, op) {
            return found(out, Found { span, kind });
        }
    }
    if let Some(f) = literal_default(text, end, limit, name, class) {
        return found(out, f);
    }
    // `name: DB_PASSWORD` / `key="ApiKey"` followed by a `value`: the name is a value here.
    match name_value_pair(text, start, end, class) {
        Some(f) => found(out, f),
        None => end,
    }
}

/// Two words in prose or Markdown (`API key: …`, `Secret Key = …`): a bare "key" after a word
/// that names a credential is a secret's name.
fn two_word_key(text: &str, start: usize, class: NameClass) -> NameClass {
    if class != NameClass::WeakKey || start < 2 || text.as_bytes()[start - 1] != b' ' {
        return class;
    }
    let prev: String = text[..start - 1].chars().rev().take_while(|c| c.is_ascii_alphanumeric()).collect();
    let prev: String = prev.chars().rev().collect::<String>().to_ascii_lowercase();
    if STRONG_KEY.contains(&prev.as_str()) || noun_of(&prev).is_some_and(|(c, _)| c != NameClass::WeakKey) {
        NameClass::Secret
    } else {
        class
    }
}

/// A word right after `/`, or after a `:` glued to a word, is inside a value (an ARN's
/// `:secret:`, an image's `/auth:tag`, a URL path, a `session:token:…` key), not a name — except
/// npmrc's `//registry/:_authToken=`; Ruby's `:api_key =>` is a name. `file:12:API_KEY=…` (grep
/// -n, the Grep tool): a line number before the colon starts a line.
fn inside_value(text: &str, start: usize) -> bool {
    let bytes = text.as_bytes();
    let grep_prefix = start > 1 && bytes[start - 1] == b':' && bytes[start - 2].is_ascii_digit() && {
        let digits = text[..start - 1].bytes().rev().take_while(u8::is_ascii_digit).count();
        let colon = start - 2 - digits.min(start - 2);
        let line_start = text[..start].rfind('\n').map_or(0, |k| k + 1);
        // `path:NUM:` from the line's start: one colon before the number, no spaces.
        start - 1 > digits
            && bytes[colon] == b':'
            && !text[line_start..colon].contains([':', ' ', '\t'])
            && colon > line_start
    };
    let inside_value = !grep_prefix
        && start > 0
        && (bytes[start - 1] == b'/' || (bytes[start - 1] == b':' && start > 1 && is_ident_byte(bytes[start - 2])));
    inside_value && !(start > 1 && &bytes[start - 2..start] == b"/:")
}

/// SQL: `CREATE USER … IDENTIFIED BY 'secret'`.
fn identified_by(text: &str, end: usize, limit: usize) -> Option<Found> {
    let rest = &text[end..limit];
    if rest.as_bytes().get(..4).is_some_and(|w| w.eq_ignore_ascii_case(b" by ")) {
        let s0 = end + 4;
        if let Some((span, quoted, op)) = quoted_after(text, s0, limit)
            && let Some(kind) = judge("password", NameClass::Password, &text[span.clone()], quoted, op)
        {
            return Some(Found { span, kind });
        }
    }
    None
}

/// `${API_KEY:-literal}`, `${TOKEN:=literal}`: the default is the value.
fn shell_default(text: &str, end: usize, limit: usize, name: &str, class: NameClass) -> Option<Found> {
    let rest = &text[end..limit];
    let skip = [":-", ":=", "-", "="].iter().find(|o| rest.starts_with(**o)).map_or(0, |o| o.len());
    if skip > 0
        && let Some(close) = rest.find('}')
        && close > skip
    {
        let span = end + skip..end + close;
        if let Some(kind) = judge(name, class, &text[span.clone()], true, Op::Assign) {
            return Some(Found { span, kind });
        }
    }
    None
}

/// A literal default after a reference: `process.env.X || '…'`, `env.X ?? "…"`,
/// `os.environ.get("X") or "…"` — only where the name is assigned to.
fn literal_default(text: &str, end: usize, limit: usize, name: &str, class: NameClass) -> Option<Found> {
    let line_end = text[end..limit].find('\n').map_or(limit, |k| end + k);
    let tail = &text[end..line_end];
    if tail.trim_start_matches(['"', '\'', ' ', ']']).starts_with(['=', ':'])
        && let Some(k) = ["||", "??", " or "].iter().filter_map(|o| tail.find(o).map(|k| k + o.len())).min()
        && let Some((span, quoted, _)) = quoted_after(text, end + k, line_end)
        && let Some(kind) = judge(name, class, &text[span.clone()], quoted, Op::Assign)
    {
        return Some(Found { span, kind });
    }
    None
}

/// When the name is a header cell of a Markdown table (the next line is the `|---|` rule),
/// judges the cell in that column of each row below; returns where to go on.
fn table_column(
    text: &str,
    start: usize,
    end: usize,
    class: NameClass,
    name: &str,
    out: &mut Vec<Found>,
) -> Option<usize> {
    let line_start = text[..start].rfind('\n').map_or(0, |k| k + 1);
    let line_end = text[end..].find('\n').map_or(text.len(), |k| end + k);
    let header = &text[line_start..line_end];
    if !header.trim_start().starts_with('|') || line_end >= text.len() {
        return None;
    }
    let rule_end = text[line_end + 1..].find('\n').map_or(text.len(), |k| line_end + 1 + k);
    let rule = text[line_end + 1..rule_end].trim();
    if !(rule.starts_with('|') && rule.contains("--") && rule.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))) {
        return None;
    }
    // The column: how many `|` come before the name on its line.
    let column = text[line_start..start].matches('|').count();
    let mut at = rule_end + 1;
    let mut rows = 0;
    while at < text.len() && rows < 200 {
        let row_end = text[at..].find('\n').map_or(text.len(), |k| at + k);
        let row = &text[at..row_end];
        if !row.trim_start().starts_with('|') {
            break;
        }
        let mut cell_start = at;
        let mut seen = 0;
        for (k, c) in row.char_indices() {
            if c == '|' {
                seen += 1;
                if seen == column {
                    cell_start = at + k + 1;
                } else if seen == column + 1 {
                    let cell = &text[cell_start..at + k];
                    let inner = cell.trim().trim_matches('`');
                    let offset =
                        cell_start + (cell.len() - cell.trim_start().len()) + usize::from(cell.trim().starts_with('`'));
                    if let Some(kind) = judge(name, class, inner, true, Op::Colon) {
                        out.push(Found { span: offset..offset + inner.len(), kind });
                    }
                    break;
                }
            }
        }
        rows += 1;
        at = row_end + 1;
    }
    Some(end)
}

/// A quoted string starting at `j` (after spaces): its inside.
fn quoted_after(text: &str, mut j: usize, limit: usize) -> Option<(Range<usize>, bool, Op)> {
    let b = text.as_bytes();
    while j < limit && b[j] == b' ' {
        j += 1;
    }
    let q = *b.get(j)?;
    if !matches!(q, b'"' | b'\'') {
        return None;
    }
    let close = text[j + 1..limit].find(q as char)? + j + 1;
    Some((j + 1..close, true, Op::Space))
}

/// Whether `hay` contains `needle` (lowercase) ignoring ASCII case.
fn contains_ci(hay: &[u8], needle: &[u8]) -> bool {
    hay.len() >= needle.len() && hay.windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle))
}

/// Stems whose presence in an identifier makes it worth parsing.
const KEYWORD_STEMS: &[&str] =
    &["pass", "pwd", "pw", "secret", "token", "key", "auth", "cred", "bearer", "basic", "sig", "-p", "-a", "-u", "-w"];

/// How a value was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// `=`, `:=`, `=>`, `<-`
    Assign,
    /// `:` (YAML, JSON, dict literals, headers)
    Colon,
    /// A space (Dockerfile `ENV NAME value`, netrc, flags).
    Space,
    /// `>` of an XML element `<password>value</password>`.
    Element,
    /// A call `setPassword("value")`.
    Call,
    /// Prose: `the admin password is X` — the value must look machine-made.
    Prose,
}

/// The value assigned to the name ending at `end`: its span, whether it was quoted, and how.
fn assigned_value(text: &str, name_start: usize, end: usize, limit: usize) -> Option<Assigned> {
    let b = text.as_bytes();
    let mut j = end;
    // Closing quote(s) of a quoted key: `"password"`, `\"password\"`, `'password'`, `password]`.
    let mut key_quoted = false;
    // plist: `<key>APIKey</key>` then `<string>value</string>` (on the next line, often).
    if text[j..].starts_with("</key>") || text[j..].starts_with("</Key>") {
        return plist_value(text, j);
    }
    // Markdown emphasis around a name: `**Password**: `…``.
    while j < limit && matches!(b[j], b'*') {
        j += 1;
    }
    while j < limit && matches!(b[j], b'"' | b'\'' | b'`' | b'\\' | b']') {
        key_quoted = true;
        j += 1;
    }
    // Android resources, property files in XML: `<string name="api_key">value</string>`.
    if key_quoted && j < limit && b[j] == b'>' {
        let s0 = j + 1;
        let close = s0 + text[s0..limit].find("</")?;
        return Some((s0..close, true, Op::Element));
    }
    let ws_before = j;
    while j < limit && matches!(b[j], b' ' | b'\t') {
        j += 1;
    }
    let spaced = j > ws_before;
    let op = match assign_op(text, name_start, end, j, limit, spaced, key_quoted) {
        Ok((op, next)) => {
            j = next;
            op
        }
        Err(answer) => return answer,
    };
    while j < limit && matches!(b[j], b' ' | b'\t' | b'*') {
        j += 1;
    }
    if op == Op::Colon && typed_assignment(text, j, limit).is_none() {
        match yaml_value(text, name_start, j, limit) {
            Ok(next) => j = next,
            Err(answer) => return answer,
        }
    }
    if matches!(op, Op::Colon | Op::Space)
        && let Some(after) = typed_assignment(text, j, limit)
    {
        // `PASSWORD: str = "…"`, `apiKey: string = "…"`, `API_KEY: &str = "…"`, Go's
        // `var apiKey string = "…"`: the value follows the `=` after the type.
        j = after;
        while j < limit && matches!(b[j], b' ' | b'\t') {
            j += 1;
        }
    }
    // String prefixes of Python/Rust/C#: b"…", r"…", u"…", f"…", @"…".
    if j + 1 < limit && matches!(b[j], b'b' | b'r' | b'u' | b'@') && matches!(b[j + 1], b'"' | b'\'') {
        j += 1;
    }
    if j >= limit {
        return None;
    }
    if op == Op::Element {
        let close = j + text[j..limit].find("</")?;
        return Some((j..close, true, op));
    }
    if op == Op::Assign && text[j..limit].starts_with("<<") {
        return heredoc_value(text, j);
    }
    if let Some(answer) = quoted_value(text, j, limit, op) {
        return answer;
    }
    if op == Op::Call {
        return None;
    }
    bare_value(text, name_start, end, j, limit, op, spaced)
}

/// A value as [`assigned_value`] finds it: its span, whether it was quoted, and how.
type Assigned = (Range<usize>, bool, Op);

/// A Markdown table row: `| DB_PASSWORD | value |`: the value is the whole next cell (from
/// `s0`, after the `|`).
fn table_cell(text: &str, s0: usize, limit: usize) -> Option<Assigned> {
    let close = text[s0..limit].find('|').map_or(limit, |k| s0 + k);
    let cell = &text[s0..close];
    let lead = cell.len() - cell.trim_start().len();
    let inner = cell.trim().trim_matches('`');
    let at = s0 + lead + usize::from(cell.trim().starts_with('`'));
    (!inner.is_empty()).then_some((at..at + inner.len(), true, Op::Colon))
}

/// Where the argument after a name given as an argument starts (`, default='…'`, `, value=…`).
fn next_argument(text: &str, mut j: usize, limit: usize) -> usize {
    let b = text.as_bytes();
    while j < limit && matches!(b[j], b' ' | b'\t') {
        j += 1;
    }
    for kw in ["default=", "value="] {
        if text[j..limit].starts_with(kw) {
            j += kw.len();
        }
    }
    j
}

/// HCL and shell heredocs: `api_key = <<EOF` — the value is the next line.
fn heredoc_value(text: &str, j: usize) -> Option<Assigned> {
    let next_start = text[j..].find('\n').map(|k| j + k + 1)?;
    let next_end = text[next_start..].find('\n').map_or(text.len(), |k| next_start + k);
    let body = text[next_start..next_end].trim();
    let s0 = next_start + (text[next_start..next_end].len() - text[next_start..next_end].trim_start().len());
    (!body.is_empty()).then_some((s0..s0 + body.len(), true, Op::Assign))
}

/// plist: `<key>APIKey</key>` then `<string>value</string>` (on the next line, often); `j` is
/// where `</key>` starts.
fn plist_value(text: &str, j: usize) -> Option<Assigned> {
    let rest = &text[j + 6..];
    let skip = rest.len() - rest.trim_start().len();
    if rest[skip..].starts_with("<string>") || rest[skip..].starts_with("<Value>") {
        let s0 = j + 6 + skip + 8 - usize::from(rest[skip..].starts_with("<Value>"));
        let close = s0 + text[s0..].find("</")?;
        return (!text[s0..close].contains('\n')).then_some((s0..close, true, Op::Element));
    }
    None
}

/// The operator between a name and its value, and where the value may start; `Err` is the
/// final answer (no value, a comparison, or a Markdown table cell found whole).
fn assign_op(
    text: &str,
    name_start: usize,
    end: usize,
    mut j: usize,
    limit: usize,
    spaced: bool,
    key_quoted: bool,
) -> Result<(Op, usize), Option<Assigned>> {
    let b = text.as_bytes();
    let op = if text[j..limit].starts_with(":=") || text[j..limit].starts_with("=>") || text[j..limit].starts_with("<-")
    {
        j += 2;
        Op::Assign
    } else if j < limit && b[j] == b'=' {
        // `==`, `=~`: a comparison (C's `eOnePass==ONEPASS_OFF`, Perl's `$pw=~/x/`).
        if b.get(j + 1).is_some_and(|c| matches!(c, b'=' | b'~')) {
            return Err(None);
        }
        j += 1;
        Op::Assign
    } else if j < limit && b[j] == b':' {
        if b.get(j + 1) == Some(&b':') {
            return Err(None);
        }
        j += 1;
        Op::Colon
    } else if j < limit && b[j] == b'>' && name_start > 0 && b[name_start - 1] == b'<' {
        j += 1;
        Op::Element
    } else if j < limit
        && b[j] == b'|'
        && text[..name_start].rsplit('\n').next().is_some_and(|l| l.trim_start().starts_with('|'))
    {
        return Err(table_cell(text, j + 1, limit));
    } else if j < limit && b[j] == b'(' && !spaced {
        j += 1;
        Op::Call
    } else if spaced && !key_quoted && (space_assign_ok(text, name_start) || typed_assignment(text, j, limit).is_some())
    {
        Op::Space
    } else if spaced
        && !key_quoted
        && matches!(b.get(j), Some(b'"' | b'\''))
        && text[..name_start].rsplit('\n').next().is_some_and(|l| l.trim().is_empty())
        && text[name_start..end].contains(|c: char| c.is_ascii_uppercase() || c == '_')
    {
        // Groovy/Gradle and other DSLs: `storePassword "…"`.
        Op::Call
    } else if spaced && !key_quoted && text.as_bytes().get(j..j + 3).is_some_and(|w| w.eq_ignore_ascii_case(b"is ")) {
        // `The admin password is X`, `your token is: X`.
        j += 3;
        if b.get(j) == Some(&b':') {
            j += 1;
        }
        Op::Prose
    } else if key_quoted
        && j < limit
        && b[j] == b','
        && name_start > 0
        && matches!(b[name_start - 1], b'"' | b'\'')
        && !(name_start > 1 && b[name_start - 2] == b'b')
        && (text[name_start..end].contains(|c: char| c == '_' || c == '.' || c == '-' || c.is_ascii_uppercase())
            || setter_call(text, name_start - 1))
    {
        // The name as a string argument, the value as the next one: `setdefault("API_KEY", "…")`,
        // `props.put("mail.smtp.password", "…")`, `define('API_KEY', '…')`, `{ "ApiKey", "…" }`,
        // `add_argument('--api-key', default='…')`. Only a quoted value counts.
        j = next_argument(text, j + 1, limit);
        Op::Call
    } else {
        return Err(None);
    };
    Ok((op, j))
}

/// YAML after `name:`: anchors and tags skipped (`&tok value`, `!!str value`), and with nothing
/// (or a block indicator) after the colon, the value is the next line, indented deeper
/// (`api_token:\n  u8jz…`, `key: |\n  …`). `Ok`: where the value starts; `Err`: the answer.
fn yaml_value(text: &str, name_start: usize, mut j: usize, limit: usize) -> Result<usize, Option<Assigned>> {
    let b = text.as_bytes();
    while j + 1 < limit && matches!(b[j], b'&' | b'!') && (b[j + 1].is_ascii_alphanumeric() || b[j + 1] == b'!') {
        while j < limit && !matches!(b[j], b' ' | b'\t') {
            j += 1;
        }
        while j < limit && matches!(b[j], b' ' | b'\t') {
            j += 1;
        }
    }
    // Nothing (or a block indicator) after the colon: the value is the next line, indented
    // deeper (`api_token:\n  u8jz…`, `key: |\n  …`).
    let rest = text[j..limit].trim_end();
    if rest.is_empty() || matches!(rest, "|" | ">" | "|-" | ">-" | "|+" | ">+") {
        let line_start = text[..name_start].rfind('\n').map_or(0, |k| k + 1);
        let indent = text[line_start..name_start].len() - text[line_start..name_start].trim_start().len();
        let Some(next_start) = text[j..].find('\n').map(|k| j + k + 1) else { return Err(None) };
        let next_end = text[next_start..].find('\n').map_or(text.len(), |k| next_start + k);
        let next = &text[next_start..next_end];
        let next_indent = next.len() - next.trim_start().len();
        let body = next.trim();
        if next_indent > indent
            && !body.is_empty()
            && !body.contains(": ")
            && !body.ends_with(':')
            && !body.starts_with('-')
            && !body.starts_with('#')
        {
            let s0 = next_start + next_indent;
            return Err(Some((s0..s0 + body.len(), false, Op::Colon)));
        }
        return Err(None);
    }
    Ok(j)
}

/// A quoted value at `j` (its quote possibly escaped, at any depth: JSON inside a JSON string);
/// `None` when no quote starts there.
fn quoted_value(text: &str, j: usize, limit: usize, op: Op) -> Option<Option<Assigned>> {
    let b = text.as_bytes();
    // Any depth of escaping: `\"`, `\\\"` (JSON inside a JSON string inside …).
    let mut depth = 0;
    while b.get(j + depth) == Some(&b'\\') {
        depth += 1;
    }
    let escaped = depth > 0 && b.get(j + depth).is_some_and(|c| matches!(c, b'"' | b'\''));
    let j = if escaped { j + depth } else { j };
    let q = b[j];
    if matches!(q, b'"' | b'\'' | b'`') {
        let s = j + 1;
        let mut k = s;
        while k < limit {
            if b[k] == q && (escaped || b[k - 1] != b'\\') {
                break;
            }
            if escaped && b[k] == b'\\' {
                // The closing quote carries the same escaping: stop at its first backslash.
                let mut n = 0;
                while b.get(k + n) == Some(&b'\\') {
                    n += 1;
                }
                if b.get(k + n) == Some(&q) {
                    break;
                }
            }
            k += 1;
        }
        if k >= limit {
            return Some(None);
        }
        // After a `"NAME", ` a string followed by `:` is the next key of a JSON object, no value.
        if op == Op::Call && text[k + 1..limit].trim_start_matches(['"', '\'', '\\', ' ']).starts_with(':') {
            return Some(None);
        }
        return Some(Some((s..k, true, op)));
    }
    None
}

/// A bare value: it ends at whitespace or a separator of the syntax around it.
fn bare_value(
    text: &str,
    name_start: usize,
    end: usize,
    j: usize,
    limit: usize,
    op: Op,
    spaced: bool,
) -> Option<Assigned> {
    let b = text.as_bytes();
    // A bare value ends at whitespace or a separator of the syntax around it; `&` only in a
    // query string (`?user=a&password=b`), not in a `.env` or properties value.
    let query = name_start > 0 && matches!(b[name_start - 1], b'?' | b'&');
    // `NAME=value` of an env file or a shell line: the value is everything to the next space.
    let line_start = text[..name_start].rfind('\n').map_or(0, |k| k + 1);
    let lead = text[line_start..name_start].trim_start_matches(['+', ' ', '\t']);
    let env_line = op == Op::Assign
        && !spaced
        && b.get(j - 1) == Some(&b'=')
        && env_style(&text[name_start..end])
        && (lead.is_empty() || lead == "export " || lead == "ENV " || lead == "ARG " || lead == "- ");
    let s = j;
    let mut k = s;
    while k < limit
        && !(if env_line {
            matches!(b[k], b' ' | b'\t' | b'\r' | b'\n' | b'"' | b'\'' | b'`')
        } else {
            matches!(b[k], b' ' | b'\t' | b'\r' | b'\n' | b',' | b';' | b'"' | b'\'' | b'`' | b'<' | b'[' | b'(')
        })
        && !(query && b[k] == b'&')
    {
        if b[k] == b'\\' {
            let mut n = 1;
            while b.get(k + n) == Some(&b'\\') {
                n += 1;
            }
            if b.get(k + n).is_some_and(|c| matches!(c, b'n' | b'"' | b't' | b'r' | b'\'')) {
                break;
            }
        }
        k += 1;
    }
    if !env_line && k < limit && matches!(b[k], b'[' | b'(' | b'<') {
        // A bare word followed by an index or a call is code: `request.form['password']`.
        return None;
    }
    // Closing brackets of the code around a bare value: `{password: x}`.
    while k > s && matches!(b[k - 1], b'}' | b')' | b']') {
        k -= 1;
    }
    Some((s..k, false, op))
}

/// Whether anything after (or around) the name could make it a name with a value: an
/// operator, an element, a space-separated form, or a name/value pair. Cheap, so that the
/// name's words are only split where it matters.
fn could_assign(text: &str, start: usize, end: usize, limit: usize) -> bool {
    let b = text.as_bytes();
    let mut j = end;
    while j < limit && matches!(b[j], b'"' | b'\'' | b'`' | b'\\' | b']' | b'*' | b'|') {
        j += 1;
    }
    let ws = j;
    while j < limit && matches!(b[j], b' ' | b'\t') {
        j += 1;
    }
    if j < limit && matches!(b[j], b'=' | b':' | b'(' | b'>' | b'<') {
        return true;
    }
    if j < limit && b[j] == b',' && ws > end {
        // A quoted name followed by its value as the next argument.
        return true;
    }
    if start > 0 && b[start - 1] == b'<' {
        return true;
    }
    let line_start = text[..start].rfind('\n').map_or(0, |k| k + 1);
    let before: Vec<u8> =
        text[line_start..start].bytes().filter(|c| !matches!(c, b'"' | b'\'' | b'\\' | b' ')).collect();
    let tail = |s: &[u8]| before.len() >= s.len() && before[before.len() - s.len()..].eq_ignore_ascii_case(s);
    if tail(b"name:") || tail(b"name=") || tail(b"key=") || tail(b"key:") || tail(b"variable") {
        return true;
    }
    j > ws && j < limit
}

/// After a name's `:` (or a space), a type and then `=`: where the value starts, after the `=`.
/// Types: `str`, `String`, `&str`, `&'static str`, `Option<String>`, `[]byte`, `string`.
fn typed_assignment(text: &str, j: usize, limit: usize) -> Option<usize> {
    let rest = &text[j..limit];
    let ty_end = rest.find(|c: char| {
        !(c.is_ascii_alphanumeric() || matches!(c, '_' | '&' | '\'' | '<' | '>' | '[' | ']' | '.' | ' '))
    })?;
    let ty = rest[..ty_end].trim();
    let after = &rest[ty_end..];
    (!ty.is_empty()
        && ty.len() <= 40
        && ty.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || matches!(c, '&' | '['))
        && after.starts_with('=')
        && !after.starts_with("==")
        && !after.starts_with("=>"))
    .then_some(j + ty_end + 1)
}

/// Whether the quote at `quote` opens the first argument of a call that stores a setting
/// (`props.setProperty("password", …)`, `headers.put("token", …)`, `os.Setenv("pw", …)`).
fn setter_call(text: &str, quote: usize) -> bool {
    let Some(before) = text[..quote].trim_end().strip_suffix('(') else { return false };
    let len = before.chars().rev().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').count();
    let name = before[before.len() - len..].to_ascii_lowercase();
    ["set", "put", "define", "env", "header", "add", "store", "config"].iter().any(|w| name.contains(w))
}

/// `NAME value` without an operator: Dockerfile `ENV`/`ARG`, netrc `password value`,
/// `… config set NAME value`.
fn space_assign_ok(text: &str, name_start: usize) -> bool {
    let line_start = text[..name_start].rfind('\n').map_or(0, |k| k + 1);
    let lower = text[line_start..name_start].to_ascii_lowercase();
    let word_before = lower.trim_end().rsplit(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '+')).next();
    if matches!(word_before, Some("env" | "arg")) {
        // Dockerfile `ENV NAME value` (also inside a diff or a JSON string).
        return true;
    }
    let name_l = text[name_start..]
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    if matches!(name_l.as_str(), "requirepass" | "masterauth") && lower.trim().is_empty() {
        // redis.conf: `requirepass s3cr3t`.
        return true;
    }
    if matches!(word_before, Some("setx"))
        || (matches!(word_before, Some("-x" | "-gx" | "-ux" | "-xg")) && lower.contains("set "))
    {
        // Windows `setx NAME value`, fish `set -x NAME value`.
        return true;
    }
    if word_before == Some("set") && lower.contains("config") {
        // `aws configure set aws_secret_access_key …`, `npm config set …:_authToken …`.
        return true;
    }
    // netrc: `machine host login user password value`, `default login user password value`.
    let name = text[name_start..].to_ascii_lowercase();
    (name.starts_with("password ") || name.starts_with("passwd "))
        && (lower.contains("machine ")
            || lower.contains("login ")
            || lower.contains("default ")
            || lower.trim().is_empty())
}

/// After `Authorization`/`X-Api-Key`-like header names: `: Bearer v`, `= "Basic v"`.
fn header_value(text: &str, name: &str, end: usize, limit: usize) -> Option<Found> {
    // Header names are short; most names are not headers: no allocation for those.
    if name.len() > 40
        || !name.bytes().any(|c| c == b'-')
            && !name.eq_ignore_ascii_case("authorization")
            && !name.eq_ignore_ascii_case("apikey")
    {
        return None;
    }
    let l = name.to_ascii_lowercase();
    let is_auth = l == "authorization" || l == "proxy-authorization" || l.ends_with("-authorization");
    let api_header = matches!(
        l.as_str(),
        "x-api-key"
            | "api-key"
            | "x-auth-token"
            | "x-access-token"
            | "private-token"
            | "x-token"
            | "apikey"
            | "x-apikey"
            | "ocp-apim-subscription-key"
            | "x-functions-key"
            | "x-goog-api-key"
            | "x-figma-token"
    );
    if !is_auth && !api_header {
        return None;
    }
    let b = text.as_bytes();
    let mut j = end;
    while j < limit && matches!(b[j], b'"' | b'\'' | b'\\') {
        j += 1;
    }
    while j < limit && b[j] == b' ' {
        j += 1;
    }
    // Header syntax is `Name: value`; `=` only for Authorization in code (`auth = "Bearer …"`).
    if j >= limit || !(b[j] == b':' || (is_auth && b[j] == b'=')) {
        return None;
    }
    j += 1;
    while j < limit && matches!(b[j], b' ' | b'"' | b'\'' | b'\\') {
        j += 1;
    }
    if is_auth {
        // Any one-word scheme (`Bearer`, `Basic`, `token`, `OAuth`, `SSWS`, `Splunk`,
        // `Klaviyo-API-Key`, `DeepL-Auth-Key`…) followed by a credential.
        let scheme_end = text[j..limit].find([' ', '\t']).map(|k| j + k)?;
        let scheme = text[j..scheme_end].to_ascii_lowercase();
        if scheme.is_empty()
            || scheme.len() > 32
            || !scheme.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        {
            return None;
        }
        return scheme_value(text, scheme_end, limit, &scheme).map(|f| Found { kind: &AUTH_HEADER, ..f });
    }
    let s = j;
    let mut k = s;
    while k < limit && token_byte(b[k]) {
        k += 1;
    }
    let v = &text[s..k];
    let dotted_code = v.contains('.') && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    (v.len() >= 16
        && looks_random(v)
        && !is_placeholder(v)
        && !is_reference(v)
        && !is_code_shape(v, false)
        && !dotted_code)
        .then_some(Found { span: s..k, kind: &AUTH_HEADER })
}

fn token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'=' | b'/' | b'+' | b'~' | b':')
}

/// The credential after an authentication scheme word ending at `end`.
fn scheme_value(text: &str, end: usize, limit: usize, scheme: &str) -> Option<Found> {
    let b = text.as_bytes();
    let mut j = end;
    // `Bearer: tok` happens too.
    if j < limit && b[j] == b':' {
        j += 1;
    }
    if j >= limit || !matches!(b[j], b' ' | b'\t') {
        return None;
    }
    while j < limit && matches!(b[j], b' ' | b'\t') {
        j += 1;
    }
    let s = j;
    while j < limit && token_byte(b[j]) && b[j] != b'='
        || (j < limit && b[j] == b'=' && j > s && b.get(j + 1).is_none_or(|c| !c.is_ascii_alphanumeric()))
    {
        // `=` only as base64 padding at the end, never `id=…`.
        j += 1;
    }
    let mut v = &text[s..j];
    while v.ends_with([':', '.']) {
        v = &v[..v.len() - 1];
    }
    if is_placeholder(v) || is_reference(v) || v.len() < 12 || is_uuid(v) && scheme != "bearer" {
        return None;
    }
    let ok = match scheme {
        // Decoded `user:password` decides; what does not decode to text may still be a key.
        "basic" => match basic_decoded(v) {
            Some(text) => text.split_once(':').is_some_and(|(_, p)| p.len() >= 3 && !is_placeholder(p)),
            None => v.len() >= 16 && looks_random(v),
        },
        _ => looks_random(v) && v.len() >= 16,
    };
    ok.then_some(Found { span: s..s + v.len(), kind: &AUTH_HEADER })
}

/// Basic credentials: the text base64 decodes to, if it is printable text with a colon.
fn basic_decoded(v: &str) -> Option<String> {
    let d = decode_base64(v)?;
    let s = String::from_utf8(d).ok()?;
    (s.contains(':') && s.chars().all(|c| !c.is_control())).then_some(s)
}

/// Basic credentials: base64 of `user:password` with a real password.
#[cfg(test)]
fn basic_credentials(v: &str) -> bool {
    basic_decoded(v).is_some_and(|s| s.split_once(':').is_some_and(|(_, p)| p.len() >= 3 && !is_placeholder(p)))
}

/// Options of command-line clients that carry a credential: `--password X`, `--password=X`,
/// `--token X`, `-pX` (MySQL/MariaDB), `-p X` (sshpass), `-a X` (redis-cli), `-u user:pass`
/// (curl).
fn cli_value(text: &str, start: usize, end: usize, limit: usize) -> Option<Found> {
    let flag = &text[start..end];
    if !flag.starts_with('-') {
        return None;
    }
    let b = text.as_bytes();
    if start > 0 && !matches!(b[start - 1], b' ' | b'\t' | b'"' | b'\'' | b'(' | b'[' | b',') {
        return None;
    }
    let line_start = text[..start].rfind('\n').map_or(0, |k| k + 1);
    let before = text[line_start..start].to_ascii_lowercase();
    let program = |names: &[&str]| {
        before.split(|c: char| c.is_whitespace() || c == '"' || c == '\'' || c == '[' || c == ',').any(|w| {
            let w = w.trim_matches(|c: char| c == '"' || c == '\'').trim_start_matches('+');
            let base = w.rsplit('/').next().unwrap_or(w);
            names.contains(&base)
        })
    };
    // The value: attached after `=`, attached to a short flag, or the next word.
    let (flag_name, attached) = match flag.split_once('=') {
        Some((f, v)) => (f, Some((start + f.len() + 1, v))),
        None => (flag, None),
    };
    let lower = flag_name.to_ascii_lowercase();
    let next_word = || {
        let mut j = end;
        if j >= limit || !matches!(b[j], b' ' | b'\t') {
            return None;
        }
        while j < limit && matches!(b[j], b' ' | b'\t') {
            j += 1;
        }
        let (q, s) = match b.get(j) {
            Some(&c @ (b'"' | b'\'')) => (Some(c), j + 1),
            _ => (None, j),
        };
        let mut k = s;
        while k < limit
            && (if let Some(q) = q { b[k] != q } else { !matches!(b[k], b' ' | b'\t' | b'"' | b'\'' | b',' | b']') })
            // An escape of the JSON string around the command line ends the word: `…X\n"`.
            && !(b[k] == b'\\' && b.get(k + 1).is_some_and(|c| matches!(c, b'n' | b't' | b'r' | b'"' | b'\'')))
        {
            k += 1;
        }
        Some(s..k)
    };
    let value = |r: Range<usize>| -> Option<Found> {
        let v = &text[r.clone()];
        (v.len() >= 6 && !is_placeholder(v) && !is_reference(v) && !v.starts_with('-') && !v.contains('/')
            || (v.len() >= 6 && looks_random(v) && !is_reference(v) && !is_placeholder(v)))
        .then_some(Found { span: r, kind: &CLI })
    };
    if (flag_name == "-u" || lower == "--user") && program(&["curl", "curlie", "http", "xh", "wget"]) {
        let r = match attached {
            Some((s, v)) => s..s + v.len(),
            None => next_word()?,
        };
        let v = &text[r.clone()];
        let (user, pass) = v.split_once(':')?;
        let s = r.start + user.len() + 1;
        if pass.len() >= 4 && !is_placeholder(pass) && !is_reference(pass) {
            return Some(Found { span: s..s + pass.len(), kind: &CLI });
        }
        return None;
    }
    // Password options of other clients: (programs, option, value attached to the option).
    const CLIENT_FLAGS: &[(&[&str], &str, bool)] = &[
        (&["sqlcmd", "bcp"], "-P", false),
        (&["ldapsearch", "ldapmodify", "ldapadd", "ldapdelete", "ldapwhoami", "ldappasswd"], "-w", false),
        (&["keytool"], "-storepass", false),
        (&["keytool"], "-keypass", false),
        (&["keytool"], "-srcstorepass", false),
        (&["keytool"], "-deststorepass", false),
        (&["zip", "unzip"], "-P", false),
        (&["7z", "7za", "7zr"], "-p", true),
        (&["twine"], "-p", false),
        (&["az"], "-p", false),
        (&["openssl"], "-passin", false),
        (&["openssl"], "-passout", false),
        (&["smbclient"], "-U", false),
    ];
    for (programs, option, glued) in CLIENT_FLAGS {
        if *glued && flag_name.len() > option.len() && flag_name.starts_with(option) && program(programs) {
            let s = start + option.len();
            let e =
                text[s..limit].find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'')).map_or(limit, |k| s + k);
            return value(s..e);
        }
        if flag_name == *option && program(programs) {
            let r = next_word()?;
            let v = &text[r.clone()];
            // `-passin pass:SECRET`, `smbclient -U user%SECRET`.
            if let Some(p) = v.strip_prefix("pass:") {
                return value(r.end - p.len()..r.end);
            }
            if *option == "-U" {
                let (_, p) = v.split_once('%')?;
                return value(r.end - p.len()..r.end);
            }
            if option.starts_with("-pass") {
                return None;
            }
            return value(r);
        }
    }
    if lower.starts_with("--") {
        let class = classify_name(lower.strip_prefix("--").unwrap_or(&lower))?;
        if class == NameClass::WeakKey
            || lower.ends_with("-file")
            || lower.ends_with("-stdin")
            || lower.ends_with("-env")
        {
            return None;
        }
        let r = match attached {
            Some((s, v)) => {
                let v = v.trim_matches(|c| c == '"' || c == '\'');
                let s = if text[s..].starts_with(['"', '\'']) { s + 1 } else { s };
                s..s + v.len()
            }
            None => next_word()?,
        };
        let f = value(r)?;
        let v = &text[f.span.clone()];
        return (class == NameClass::Password || looks_random(v)).then_some(f);
    }
    // Short options of known clients. `-p'secret'`: quoted right after the option.
    if flag_name == "-p"
        && matches!(b.get(end), Some(b'\'' | b'"'))
        && program(&["mysql", "mariadb", "mysqldump", "mysqladmin", "mariadb-dump", "mysqlimport", "mysqlshow"])
    {
        let q = b[end] as char;
        let close = text[end + 1..limit].find(q)? + end + 1;
        return value(end + 1..close);
    }
    if flag_name.len() > 2
        && flag_name.starts_with("-p")
        && program(&["mysql", "mariadb", "mysqldump", "mysqladmin", "mariadb-dump", "mysqlimport", "mysqlshow"])
    {
        // `-pSECRET`: the value runs to the end of the word, whatever it holds.
        let s = start + 2;
        let e =
            text[s..limit].find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '\\')).map_or(limit, |k| s + k);
        return value(s..e);
    }
    if flag_name == "-p"
        && program(&[
            "sshpass",
            "mongo",
            "mongosh",
            "mongodump",
            "mongorestore",
            "mongoexport",
            "mongoimport",
            "docker",
            "podman",
            "nerdctl",
            "helm",
            "skopeo",
            "buildah",
            "htpasswd",
        ])
    {
        return value(next_word()?);
    }
    if flag_name == "-a" && program(&["redis-cli", "keydb-cli", "valkey-cli"]) {
        return value(next_word()?);
    }
    None
}

/// `name: DB_PASSWORD` … `value: s3cr3t` (Kubernetes env, ECS task definitions, .NET
/// appSettings `key="ApiKey" value="…"`): the secret name is itself a value, and the secret
/// follows in a `value` field on the same line or the next one.
fn name_value_pair(text: &str, start: usize, end: usize, class: NameClass) -> Option<Found> {
    let b = text.as_bytes();
    let line_start = text[..start].rfind('\n').map_or(0, |k| k + 1);
    let before = text[line_start..start].trim_end_matches(['"', '\'', ' ', '\\']);
    // Quotes and escapes out: `{"name": "DB_PASSWORD"` and `{\"Key\":\"…` read as `name:`.
    let before_l: String =
        before.chars().filter(|c| !matches!(c, '"' | '\'' | '\\' | ' ')).collect::<String>().to_ascii_lowercase();
    let pair = before_l.ends_with("name:")
        || before_l.ends_with("name=")
        || before_l.ends_with("key=")
        || before_l.ends_with("key:");
    // HCL: `variable "db_password" {` … `default = "…"`.
    let label = before_l.ends_with("variable")
        && text[end..].trim_start_matches(['"', '\\']).trim_start_matches(' ').starts_with('{');
    if !pair && !label {
        return None;
    }
    // Search the rest of this line and the next few for the value field.
    let mut stop = end;
    let mut lines = 0;
    while stop < b.len() && lines < if label { 4 } else { 2 } {
        if b[stop] == b'\n' {
            lines += 1;
        }
        stop += 1;
    }
    let lower = text[end..stop].to_ascii_lowercase();
    let fields: &[&str] = if label { &["default"] } else { &["value"] };
    for field in fields {
        let mut from = 0;
        while let Some(k) = lower[from..].find(field) {
            let vs = end + from + k;
            let ve = vs + field.len();
            from += k + field.len();
            // `value`, or a field ending in it (`ParameterValue`, `SecretValue`).
            let bounded = (vs == 0 || !b[vs - 1].is_ascii_alphanumeric() || b[vs].is_ascii_uppercase())
                && b.get(ve).is_none_or(|c| !c.is_ascii_alphanumeric() && *c != b'_');
            if !bounded {
                continue;
            }
            if let Some((span, quoted, op)) = assigned_value(text, vs, ve, stop) {
                let v = &text[span.clone()];
                return judge(&text[start..end], class, v, quoted, op).map(|kind| Found { span, kind });
            }
        }
    }
    // A list item that gives the value first: `- value: …` on the line above `name: API_TOKEN`.
    if pair && line_start > 0 {
        let prev_start = text[..line_start - 1].rfind('\n').map_or(0, |k| k + 1);
        let prev = &text[prev_start..line_start - 1];
        let lower = prev.to_ascii_lowercase();
        if let Some(k) = lower.find("value")
            && let Some((span, quoted, op)) = assigned_value(text, prev_start + k, prev_start + k + 5, line_start - 1)
        {
            return judge(&text[start..end], class, &text[span.clone()], quoted, op).map(|kind| Found { span, kind });
        }
    }
    None
}

/// Whether `value`, written after a name of `class`, is a literal secret; and which kind.
fn judge(name: &str, class: NameClass, value: &str, quoted: bool, op: Op) -> Option<&'static Kind> {
    let v = value.trim();
    if v.len() != value.len() && !quoted {
        return None;
    }
    if v.len() < 6 || v.len() > 1000 || is_placeholder(v) || is_reference(v) || is_benign_shape(v) {
        return None;
    }
    if v.chars().any(|c| c.is_control()) || is_code_shape(v, quoted) {
        return None;
    }
    // Code, not a literal: a bare identifier or dotted path after `=` with spaces around it
    // (`password = get_password`, `token: this.token`), a call, an expression.
    let identifier = v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    if !quoted && unquoted_code(name, v, op, identifier) {
        return None;
    }
    let call = v.find('(').is_some_and(|k| {
        k > 0 && v.ends_with(')') && v[..k].chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
    });
    if call {
        // `var(--blue-500)`, `getenv("X")`, `secrets.get("x")`: a call, also inside quotes.
        return None;
    }
    if quoted && identifier && v.contains('.') && !v.chars().any(|c| c.is_ascii_digit()) {
        // "config.password", "settings.db.token": a key path.
        return None;
    }
    if v.contains(' ') && class != NameClass::Password {
        return None;
    }
    let words = v.split_whitespace().count();
    if words > 6 || (words > 3 && !looks_random(&v.replace(' ', ""))) {
        // Prose: "Password must be at least 8 characters"; a passphrase `my dog Rex 2019` is kept.
        return None;
    }
    if op == Op::Prose && (!looks_random(v) || words > 1) {
        return None;
    }
    let lname = name.to_ascii_lowercase();
    if (lname.contains("aws") || lname.contains("secret_access") || lname.contains("secretaccess"))
        && v.len() == 40
        && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '/' || c == '+')
        && looks_random(v)
    {
        return Some(&AWS_SECRET);
    }
    judge_class(name, class, v)
}

/// An unquoted value that is code, not a literal: a name of something after `=` (unless the
/// name is env style), a dotted or camel-case path after `:`, an expression or a call.
fn unquoted_code(name: &str, v: &str, op: Op, identifier: bool) -> bool {
    // Random-looking bare words are literals (`?token=q8Zt…`); others are names of things.
    let code_like = identifier && (v.contains('.') || !looks_random(v));
    match op {
        Op::Assign | Op::Call => {
            if code_like && !env_style(name) {
                return true;
            }
        }
        Op::Colon => {
            if identifier
                && ((v.contains('.') && dotted_code(v))
                    || (has_inner_upper(v) && !v.chars().any(|c| c.is_ascii_digit())))
            {
                return true;
            }
        }
        Op::Space | Op::Element | Op::Prose => {}
    }
    if v.starts_with(['[', '{', '(', '!', '|', '>', '*', '&'])
        || (v.contains('(') && !(env_style(name) && op == Op::Assign))
    {
        return true;
    }
    false
}

/// The kind of secret a value is under a name of `class` (`None`: not a secret).
fn judge_class(name: &str, class: NameClass, v: &str) -> Option<&'static Kind> {
    match class {
        NameClass::Password => {
            let words = v.split_whitespace().count();
            if words > 1 && !looks_random(&v.replace(' ', "")) {
                return None;
            }
            // A short word alone (`bowser`, `blabla`) is a fixture, not a password anyone uses.
            if v.len() < 8 && v.chars().all(|c| c.is_ascii_alphabetic()) {
                return None;
            }
            Some(if looks_random(v) { &PASSWORD } else { &PASSWORD_WORDLIKE })
        }
        NameClass::Secret => {
            if v.len() < 12 {
                return None;
            }
            let hex = v.chars().all(|c| c.is_ascii_hexdigit());
            let lname = name.to_ascii_lowercase();
            // Hex shorter than a key is an id; a signing or GPG "key" in hex is its id or fingerprint.
            if hex && (v.len() < 20 || lname.contains("signing") || lname.contains("gpg") || lname.contains("pgp")) {
                return None;
            }
            if is_uuid(v) {
                return None;
            }
            // A random-looking value, or a long one of several character classes that is not
            // made of words (`user:profile:1234` names a thing).
            (looks_random(v) || (v.len() >= 12 && classes(v) >= 3 && !wordlike(v))).then_some(&ASSIGNMENT)
        }
        NameClass::WeakKey if has_hex_run(v, 32) => None,
        NameClass::WeakKey => {
            let hexy = v.chars().all(|c| c.is_ascii_hexdigit());
            (v.len() >= 20 && !hexy && !is_uuid(v) && classes(v) >= 3 && crate::values::shannon(v) >= 3.8)
                .then_some(&WEAK_KEY)
        }
    }
}

/// `DB_PASSWORD=x` (upper-case env style) takes a bare word as a literal.
fn env_style(name: &str) -> bool {
    name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

fn has_inner_upper(v: &str) -> bool {
    v.chars().skip(1).any(|c| c.is_ascii_uppercase()) && v.chars().any(|c| c.is_ascii_lowercase())
}

/// Made of lowercase words and numbers joined by separators: `user:profile:1234`,
/// `prod-db-credentials`, `session.v2`.
fn wordlike(v: &str) -> bool {
    v.split([':', '-', '_', '.', '/', ' ']).all(|p| {
        p.chars().all(|c| c.is_ascii_lowercase())
            || (p.len() > 1
                && p.chars().next().is_some_and(|c| c.is_ascii_uppercase())
                && p.chars().skip(1).all(|c| c.is_ascii_lowercase()))
            || p.chars().all(|c| c.is_ascii_digit())
            || (p.len() <= 3 && p.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()))
    })
}

/// A dotted path of readable identifiers (`node.colon2_token`, `self.config.api_key`), not a
/// dotted token (`F1LlqsajAI.xNKu8iS2G8`): each part an identifier whose `_`-words are short
/// and not random.
fn dotted_code(v: &str) -> bool {
    v.split('.').all(|p| {
        p.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && p.split('_').all(|w| w.len() <= 10 && !looks_random(w))
    })
}

/// Whether `v` holds a run of at least `n` hex digits (a hash inside a label: CI cache keys).
fn has_hex_run(v: &str, n: usize) -> bool {
    let mut run = 0;
    for c in v.chars() {
        run = if c.is_ascii_hexdigit() { run + 1 } else { 0 };
        if run >= n {
            return true;
        }
    }
    false
}

/// How many of lower, upper, digit, symbol occur.
fn classes(v: &str) -> usize {
    let l = v.chars().any(|c| c.is_ascii_lowercase()) as usize;
    let u = v.chars().any(|c| c.is_ascii_uppercase()) as usize;
    let d = v.chars().any(|c| c.is_ascii_digit()) as usize;
    let s = v.chars().any(|c| !c.is_ascii_alphanumeric()) as usize;
    l + u + d + s
}

/// A machine-made value rather than a word: mixed classes, enough entropy for its length.
pub(crate) fn looks_random(v: &str) -> bool {
    let n = v.len();
    if n < 8 {
        return false;
    }
    let e = crate::values::shannon(v);
    let hex = v.chars().all(|c| c.is_ascii_hexdigit());
    if hex {
        return n >= 16
            && e >= 2.8
            && v.chars().any(|c| c.is_ascii_digit())
            && v.chars().any(|c| c.is_ascii_alphabetic());
    }
    let digits = v.chars().any(|c| c.is_ascii_digit());
    let letters = v.chars().any(|c| c.is_ascii_alphabetic());
    // Words glued by separators (`my-service-account`, `session-store-v2`) are names, not keys.
    if wordlike(v) {
        return false;
    }
    // Without digits, only a long value of mixed case and symbols is machine-made (a short
    // `fifo:PATH` is not).
    let upper_lower = v.chars().any(|c| c.is_ascii_uppercase()) && v.chars().any(|c| c.is_ascii_lowercase());
    letters && (digits || (n >= 16 && classes(v) >= 3 && upper_lower)) && e >= if n >= 20 { 3.3 } else { 2.8 }
}

/// Values shaped like code or names rather than literal secrets: paths of a language
/// (`token::Paren`), generic types (`Option<&[u8]>`), constants (`IFLA_INET6_TOKEN`,
/// `"SERVER_TRAFFIC_SECRET_0"`), snake-case identifiers (`x25519_generate_private_key`),
/// byte-escaped test data (`b"\xb8\x0b…"`), word pairs (`true/false`).
fn is_code_shape(v: &str, quoted: bool) -> bool {
    let screaming = v.contains('_')
        && v.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && v.chars().any(|c| c.is_ascii_uppercase());
    let snake = v.contains('_')
        && v.split('_').all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()))
        && v.split('_').filter(|p| p.chars().next().is_some_and(|c| c.is_ascii_lowercase())).count() >= 2;
    let word_pair = v.contains('/') && v.chars().all(|c| c.is_ascii_alphabetic() || c == '/');
    // URL-encoded test data: `pass%5B%7F`, `value%27with%27quotes`.
    let escapes = v
        .as_bytes()
        .windows(3)
        .filter(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit())
        .count();
    escapes >= 2
        || v.contains("::")
        || v.contains("->")
        || v.contains("=>")
        || v.matches("\\x").count() >= 2
        || screaming
        || word_pair
        || (!quoted && (snake || v.contains('<') || v.contains('>')))
        || (!quoted
            && v.starts_with('_')
            && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !looks_random(v))
}

fn is_uuid(v: &str) -> bool {
    v.len() == 36
        && v.chars()
            .enumerate()
            .all(|(i, c)| if [8, 13, 18, 23].contains(&i) { c == '-' } else { c.is_ascii_hexdigit() })
}

/// Values that are references to a secret kept elsewhere, or code.
pub(crate) fn is_reference(v: &str) -> bool {
    let l = v.to_ascii_lowercase();
    // `$VAR`, `${VAR}`, `$(cmd)`, `$env:X`; not a password that starts with `$&9#`.
    (l.starts_with('$') && l[1..].starts_with(|c: char| c.is_ascii_alphabetic() || matches!(c, '{' | '(' | '_')))
        || l.starts_with('%') && l.ends_with('%')
        || l.starts_with("os.")
        || l.starts_with("process.env")
        || l.starts_with("env.")
        || l.starts_with("env[")
        || l.starts_with("env(")
        || l.starts_with("getenv")
        || l.starts_with("secrets.")
        || l.starts_with("secret.")
        || l.starts_with("vars.")
        || l.starts_with("var.")
        || l.starts_with("local.")
        || l.starts_with("data.")
        || l.starts_with("module.")
        || l.starts_with("self.")
        || l.starts_with("this.")
        || l.starts_with("config.")
        || l.starts_with("settings.")
        || l.starts_with("params.")
        || l.starts_with("props.")
        || l.starts_with("vault:")
        || l.starts_with("ref+")
        || l.starts_with("arn:")
        || l.starts_with("!ref")
        || l.starts_with("!sub")
        || l.starts_with("!getatt")
        || l.starts_with("secretref")
        || l.starts_with("op://")
        || l.starts_with("sm://")
        || l.starts_with("gcp:")
        || l.starts_with("azurekeyvault")
        || l.starts_with("@microsoft.keyvault")
        || l.starts_with("file:")
        || l.starts_with("env:")
        || l.starts_with("keyring:")
        // `{{ x }}`, `{name}`; not a password that starts with `{Wt:`.
        || (l.starts_with('{') && (l.starts_with("{{") || (l.ends_with('}') && l[1..l.len() - 1].chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ' ')))))
        || l.contains("${")
        || l.contains("{{")
        || l.contains("#{")
        || l.contains("%(")
        || l.contains("<%")
}

/// Hashes, identifiers, paths, URLs, numbers, booleans: never secrets by context.
fn is_benign_shape(v: &str) -> bool {
    let l = v.to_ascii_lowercase();
    let path_like = (v.starts_with('/') || v.starts_with("./") || v.starts_with("../") || v.starts_with("~/"))
        && !looks_random(&v.replace('/', ""))
        || (v.len() > 2 && v.as_bytes()[1] == b':' && v.as_bytes()[2] == b'\\')
        || (v.contains('/')
            && !v.contains('+')
            && !v.contains('=')
            && v.rsplit('.')
                .next()
                .is_some_and(|ext| (1..=5).contains(&ext.len()) && ext.chars().all(|c| c.is_ascii_lowercase())));
    // Windows paths and registry keys: `SOFTWARE\Microsoft\VisualStudio`.
    let backslash_path = v.matches('\\').count() >= 2
        && !v.contains(['=', '+'])
        && v.split('\\')
            .all(|p| p.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ' ' | ':')));
    path_like
        || backslash_path
        || l.starts_with("http://") && !l.contains('@')
        || l.starts_with("https://") && !l.contains('@')
        || l.starts_with("sha1-")
        || l.starts_with("sha256-")
        || l.starts_with("sha384-")
        || l.starts_with("sha512-")
        || l.starts_with("sha256:")
        || l.starts_with("md5-")
        || l.starts_with("data:")
        || v.chars().all(|c| c.is_ascii_digit() || c == '.' || c == '-' || c == '_' || c == ':')
        // Number literals of code: `0x3456_7890` (64 bits at most), `0b1010`, `0o755`.
        || number_literal(&l)
        || matches!(
            l.as_str(),
            "true"
                | "false"
                | "null"
                | "none"
                | "nil"
                | "undefined"
                | "required"
                | "optional"
                | "string"
                | "yes"
                | "no"
                | "on"
                | "off"
                | "disabled"
                | "enabled"
                | "empty"
                | "secret"
                | "password"
                | "token"
        )
        || is_email(v)
        // Keys published by design: Stripe and Clerk publishable keys, Mapbox public tokens,
        // PostHog project keys, Flutterwave public keys, Supabase publishable keys; Stripe's
        // client secrets of payment and setup intents (handed to the browser).
        || ["pk_live_", "pk_test_", "pk.eyj", "phc_", "flwpubk", "sb_publishable_"].iter().any(|p| l.starts_with(p))
        || ((l.starts_with("pi_") || l.starts_with("seti_")) && l.contains("_secret_"))
        // Password hashes: what a password becomes, not the password.
        || ["pbkdf2_", "pbkdf2:", "$2a$", "$2b$", "$2y$", "$argon2", "$scrypt", "$6$", "$5$", "$1$", "{ssha}", "{sha}", "{bcrypt}", "sha256$", "sha1$", "md5$", "bcrypt$", "scrypt:"]
            .iter()
            .any(|p| l.starts_with(p))
}

/// A number literal of code: hex up to 64 bits, binary, octal, `_` separators allowed.
fn number_literal(l: &str) -> bool {
    let digits = |r: &str, ok: fn(char) -> bool, max: usize| {
        let d: Vec<char> = r.chars().filter(|c| *c != '_').collect();
        !d.is_empty() && d.len() <= max && d.iter().all(|c| ok(*c))
    };
    match (l.get(..2), l.get(2..)) {
        (Some("0x"), Some(r)) => digits(r, |c| c.is_ascii_hexdigit(), 16),
        (Some("0b"), Some(r)) => digits(r, |c| matches!(c, '0' | '1'), 64),
        (Some("0o"), Some(r)) => digits(r, |c| matches!(c, '0'..='7'), 22),
        _ => false,
    }
}

/// `name@example.com`.
fn is_email(v: &str) -> bool {
    let Some((local, domain)) = v.split_once('@') else { return false };
    !local.is_empty()
        && local.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '%' | '+' | '-'))
        && domain.contains('.')
        && domain.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'))
        && domain.rsplit('.').next().is_some_and(|tld| tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphabetic()))
}

/// Placeholders, templates and masked values.
pub(crate) fn is_placeholder(s: &str) -> bool {
    crate::values::is_placeholder(s)
}

/// Kubernetes Secret manifests (YAML or JSON): every `data:` value is base64 of a secret.
/// A value counts when its key names a credential, when its decoded text holds a secret the
/// scanner finds, or when the decoded value is itself random-looking.
pub(crate) fn k8s_secret_data(text: &str, window: Range<usize>, inner: &dyn Fn(&str) -> bool, out: &mut Vec<Found>) {
    let w = &text[window.clone()];
    let lower = w.to_ascii_lowercase();
    let Some(kind_at) = lower.find("kind: secret").or_else(|| lower.find("\"kind\": \"secret\"")) else { return };
    // The document holding `kind: Secret`: from the previous `---` to the next.
    let doc_start = lower[..kind_at].rfind("\n---").map_or(0, |k| k + 4);
    let doc_end = lower[kind_at..].find("\n---").map_or(w.len(), |k| kind_at + k);
    let doc = &w[doc_start..doc_end];
    let mut in_data: Option<usize> = None;
    let mut off = window.start + doc_start;
    for line in doc.split_inclusive('\n') {
        let here = off;
        off += line.len();
        let content = line.trim_end_matches(['\n', '\r']);
        let indent = content.len() - content.trim_start().len();
        let t = content.trim_start();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if let Some(d) = in_data
            && indent <= d
        {
            in_data = None;
        }
        if t == "data:" || t.starts_with("\"data\": {") || t == "binaryData:" {
            in_data = Some(indent);
            continue;
        }
        if in_data.is_none() {
            continue;
        }
        let Some((k, v)) = t.split_once(':') else { continue };
        let key = k.trim().trim_matches('"');
        let v = v.trim().trim_end_matches(',').trim_matches('"');
        if v.len() < 8 || !v.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=')) {
            continue;
        }
        let Some(decoded) = decode_base64(v) else { continue };
        let Ok(plain) = std::str::from_utf8(&decoded) else { continue };
        let plain = plain.trim_end_matches('\n');
        let by_name = classify_name(key).is_some() && plain.len() >= 6 && !is_placeholder(plain);
        let random = plain.len() >= 16 && looks_random(plain) && !plain.contains(' ');
        if by_name || random || inner(plain) {
            let at = here + (line.find(v).unwrap_or(0));
            out.push(Found { span: at..at + v.len(), kind: &K8S_SECRET });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_every_style() {
        assert_eq!(words("dbPassword"), ["db", "password"]);
        assert_eq!(words("API_KEY"), ["api", "key"]);
        assert_eq!(words("x-api-key"), ["x", "api", "key"]);
        assert_eq!(words("APIKey"), ["api", "key"]);
        assert_eq!(words("password2"), ["password", "2"]);
        assert_eq!(words("spring.datasource.password"), ["spring", "datasource", "password"]);
    }

    #[test]
    fn names_are_classified() {
        for n in
            ["password", "DB_PASSWORD", "dbPass", "db_pass", "PGPASSWORD", "mysql_pwd", "passphrase", "smtpPassword"]
        {
            assert_eq!(classify_name(n), Some(NameClass::Password), "{n}");
        }
        for n in [
            "api_key",
            "apiKey",
            "X-API-KEY",
            "client_secret",
            "SECRET_KEY_BASE",
            "access_token",
            "authToken",
            "GITHUB_TOKEN",
            "AccountKey",
            "auth",
            "_authToken",
            "signing_key",
            "credentials",
        ] {
            assert_eq!(classify_name(n), Some(NameClass::Secret), "{n}");
        }
        for n in [
            "token_url",
            "password_length",
            "max_tokens",
            "tokenizer",
            "key_id",
            "public_key",
            "next_token",
            "secret_name",
            "passthrough",
            "author",
            "keyboard",
            "monkey",
            "auth_url",
            "cache_key",
            "sort_key",
            "pass_through",
            "password_hash",
            "csrf_token",
            "keys",
            "compass",
            "bypass",
        ] {
            assert_eq!(classify_name(n), None, "{n}");
        }
        assert_eq!(classify_name("key"), Some(NameClass::WeakKey));
    }

    fn found(text: &str) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        for (s, line) in text.split_inclusive('\n').scan(0, |at, l| {
            let s = *at;
            *at += l.len();
            Some((s, l))
        }) {
            find(text, s..s + line.trim_end_matches('\n').len(), &mut out);
        }
        out.into_iter().map(|f| (f.kind.id, text[f.span].to_string())).collect()
    }

    #[test]
    fn values_in_every_syntax() {
        let v = "q8ZtL2mVx7KcR4pN";
        for t in [
            format!("API_KEY={v}"),
            format!("export API_TOKEN=\"{v}\""),
            format!("api_key: {v}"),
            format!("\"apiKey\": \"{v}\","),
            format!("api_key = \"{v}\""),
            format!("apiKey := \"{v}\""),
            format!("String apiKey = \"{v}\";"),
            format!(":api_key => '{v}'"),
            format!("ENV API_TOKEN {v}"),
            format!("ENV API_TOKEN={v}"),
            format!("<apiKey>{v}</apiKey>"),
            format!("client.setApiKey(\"{v}\")"),
            format!("{{\\\"token\\\": \\\"{v}\\\"}}"),
            format!("https://api.example.com/v1?access_token={v}&x=1"),
            format!("Server=db;User Id=app;Password={v};"),
            format!("- name: API_TOKEN\n  value: \"{v}\""),
            format!("<add key=\"ApiKey\" value=\"{v}\" />"),
            format!("mysql -u root -p{v} db"),
            format!("sshpass -p '{v}' ssh host"),
            format!("redis-cli -a {v} ping"),
            format!("tool --api-token {v}"),
            format!("tool --password={v}"),
            format!("curl -u admin:{v} https://x"),
            format!("Authorization: Bearer {v}abc"),
            format!("machine api.example.com login me password {v}"),
            format!("PASSWORD: str = \"{v}\""),
            format!("const apiKey: string = '{v}';"),
            format!("const API_KEY: &str = \"{v}\";"),
            format!("var apiKey string = \"{v}\""),
            format!("aws configure set aws_secret_access_key {v}"),
            format!("https://acct.blob.core.windows.net/c/f?sv=2022-11-02&se=2026-12-31&sp=r&sig={v}%3D"),
            format!("MAPBOX_KEY={v}"),
            format!("stripeKey: \"{v}\""),
            format!("{{\"name\": \"DB_PASSWORD\", \"value\": \"{v}\"}}"),
            format!("{{\"ParameterKey\": \"ApiToken\", \"ParameterValue\": \"{v}\"}}"),
            format!("os.environ.setdefault(\"API_KEY\", \"{v}\")"),
            format!("parser.add_argument('--api-key', default='{v}')"),
            format!("DB_PASSWORD={v}(x"),
            format!("api.key={v}"),
            format!("requirepass {v}"),
            format!("sqlcmd -S db -U sa -P {v} -Q 'select 1'"),
            format!("mysqldump -uroot -p'{v}' app"),
            format!("curl --user admin:{v} https://x"),
            format!("minio:\n  accessKey: {v}"),
            format!("Authorization: OAuth {v}abc"),
            format!("EMAIL_HOST_PASSWORD={v}"),
            format!("api_token:\n  {v}"),
            format!("api_token: &tok {v}"),
            format!("| DB_PASSWORD | {v} |"),
            format!("**Password**: `{v}`"),
            format!("<string name=\"api_key\">{v}</string>"),
            format!("<key>APIKey</key>\n\t<string>{v}</string>"),
            format!("API_KEY=\"${{API_KEY:-{v}}}\""),
            format!("const apiKey = process.env.API_KEY || '{v}';"),
            format!("token = os.environ.get('TOKEN') or \"{v}\""),
            format!("api_key = <<EOF\n{v}\nEOF"),
            format!("- value: {v}\n  name: API_TOKEN"),
            format!("| Service | Username | Password |\n|---|---|---|\n| Grafana | admin | {v} |"),
        ] {
            let got = found(&t);
            assert!(got.iter().any(|(_, s)| s.starts_with(v)), "missed in {t:?}: {got:?}");
        }
    }

    #[test]
    fn decoys_stay_quiet() {
        for t in [
            "password = get_password()",
            "token = self.token",
            "api_key = config.api_key",
            "password: ${DB_PASSWORD}",
            "token_count = 123456789",
            "secret_name: prod-db-credentials",
            "password_file = /run/secrets/db_password.txt",
            "key = 'user_profile_cache'",
            "token = 550e8400-e29b-41d4-a716-446655440000",
            "public_key = 'AAAAC3NzaC1lZDI1NTE5AAAAIHmR3'",
            "tokenizer = AutoTokenizer.from_pretrained(name)",
            "password = os.environ['DB_PASSWORD']",
            "\"integrity\": \"sha512-r3GwnPFYhvmuTtiLOfYczUJ4zIKdztgacm06EMXQdYG6\"",
            "if password == 'x1y2z3w4v5':",
            "auth_url = https://login.example.com/oauth",
            "mysql -u root -p db",
            "Password must be at least 8 characters long",
            "let key = map.get(&id);",
            "secretKeyRef: {name: db, key: password}",
            "STRIPE_PUBLISHABLE_KEY=pk_live_51HqLyjWDarjtT1zdp7dcXfUq",
            "const apiKey = process.env.API_KEY;",
            "apiKey: import.meta.env.VITE_FIREBASE_API_KEY as string,",
            "\"Resource\": \"arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf\"",
            "image: ghcr.io/acme/auth:sha-a4c123b1612d",
            "WARN invalid token 3f2b8c4e-9a1d-4e6f-b7c2-5d8e9f0a1b2c",
            "signingkey = 4AEE18F83AFDEB23",
            "password = 'pbkdf2_sha256$600000$abcdefgh$Zq8vN2kP4mX7rT1wAbCd='",
            "if( eOnePass==ONEPASS_OFF ){",
            "let proxy = render_pass(frame);",
            "colon2_token: node.colon2_token,",
            "let ret = ctx.hash_password_into(b\"password\", b\"diffsalt\", &mut out);",
            "keywords = [\"read\", \"password\", \"security\", \"pass\", \"getpass\"]",
            "fn roundtrip(aes_mode: AesMode, password: &[u8], plaintext: &[u8]) -> bool {",
            "mapboxgl.accessToken = \"pk.eyJ1IjoiZXhhbXBsZSIsImEiOiJjbGFiYzEyMyJ9.aBcD3fGh1jKl\";",
            "cache_key = \"user:profile:1234\"",
            "redis_key: session-store-v2",
            "sortKey: \"createdAtDescending\"",
            "let value: String = compute();",
            "translation_key: \"checkout.button.pay_now\"",
        ] {
            let got = found(t);
            assert!(got.is_empty(), "{t:?} flagged {got:?}");
        }
    }

    #[test]
    fn basic_auth_must_decode_to_user_and_password() {
        assert!(basic_credentials("YWRtaW46czNjcjN0UGFzcw=="));
        assert!(!basic_credentials("bm90aGluZw=="));
    }
}
