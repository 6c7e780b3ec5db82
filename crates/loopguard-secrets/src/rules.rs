//! The built-in rules. Each has true-positive and false-positive fixtures in tests/fixtures.

use serde::Serialize;

/// How bad a leak of this kind is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    /// Weak or generic signal.
    Low,
    /// Likely a credential of limited scope.
    Medium,
    /// A live credential for a service.
    High,
    /// Keys to infrastructure, money or identity (cloud keys, private keys, payment keys).
    Critical,
}

impl Severity {
    /// Weight used in scoring.
    pub fn weight(self) -> u32 {
        match self {
            Severity::Low => 1,
            Severity::Medium => 3,
            Severity::High => 10,
            Severity::Critical => 40,
        }
    }
}

/// One detection rule.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// Stable id (also the redaction label).
    pub id: &'static str,
    /// What it finds.
    pub description: &'static str,
    /// How bad a finding is.
    pub severity: Severity,
    /// Lowercase literals, one of which must occur near a match (the prefilter).
    pub keywords: &'static [&'static str],
    /// The pattern; the secret is capture group `group` (0 = whole match).
    pub regex: &'static str,
    /// Which capture group is the secret.
    pub group: usize,
    /// Minimum Shannon entropy (bits per char) of the secret; 0 disables the check.
    pub min_entropy: f32,
}

const fn r(
    id: &'static str,
    description: &'static str,
    severity: Severity,
    keywords: &'static [&'static str],
    regex: &'static str,
    group: usize,
    min_entropy: f32,
) -> Rule {
    Rule { id, description, severity, keywords, regex, group, min_entropy }
}

use Severity::*;

/// loopguard's own rule set.
pub const BUILTIN_RULES: &[Rule] = &[
    r(
        "aws-access-key-id",
        "AWS access key id",
        Critical,
        &["akia", "asia", "abia", "acca"],
        r"\b((?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b",
        1,
        3.0,
    ),
    r(
        "aws-secret-access-key",
        "AWS secret access key",
        Critical,
        &["aws_secret", "secret_access_key", "secretaccesskey", "aws-secret"],
        r#"(?i)(?:aws_?secret_?(?:access_?)?key|secretaccesskey)["']?\s*[:=]\s*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+]|$)"#,
        1,
        3.5,
    ),
    r("gcp-api-key", "Google API key", High, &["aiza"], r"\b(AIza[0-9A-Za-z_\-]{35})\b", 1, 3.0),
    r(
        "gcp-service-account",
        "Google service account private key (JSON)",
        Critical,
        &["service_account"],
        r#""type"\s*:\s*"service_account"[\s\S]{0,2000}?"private_key"\s*:\s*"(-----BEGIN[^"]{20,}?)""#,
        1,
        0.0,
    ),
    r(
        "azure-storage-connection-string",
        "Azure storage connection string",
        Critical,
        &["accountkey="],
        r"(?i)AccountKey=([A-Za-z0-9+/]{60,}={0,2})",
        1,
        3.5,
    ),
    r(
        "github-pat",
        "GitHub personal access token (classic)",
        Critical,
        &["ghp_"],
        r"\b(ghp_[A-Za-z0-9]{36,255})\b",
        1,
        3.0,
    ),
    r(
        "github-fine-grained-pat",
        "GitHub fine-grained personal access token",
        Critical,
        &["github_pat_"],
        r"\b(github_pat_[A-Za-z0-9_]{82,255})\b",
        1,
        3.0,
    ),
    r(
        "github-oauth",
        "GitHub OAuth, app, user-to-server or refresh token",
        Critical,
        &["gho_", "ghu_", "ghs_", "ghr_"],
        r"\b((?:gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255})\b",
        1,
        3.0,
    ),
    r(
        "gitlab-token",
        "GitLab token",
        Critical,
        &["glpat-", "gldt-", "glrt-", "glptt-"],
        r"\b((?:glpat|gldt|glrt|glptt)-[A-Za-z0-9_\-]{20,64})\b",
        1,
        3.0,
    ),
    r(
        "slack-token",
        "Slack token",
        High,
        &["xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxe"],
        r"\b(xox[abprse](?:\.[a-z0-9]+)?-[0-9A-Za-z\-]{10,250})\b",
        1,
        3.0,
    ),
    r(
        "slack-webhook",
        "Slack incoming webhook",
        High,
        &["hooks.slack.com"],
        r"(https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{8,}/[A-Za-z0-9+/]{8,}(?:/[A-Za-z0-9+/]{8,})?)",
        1,
        0.0,
    ),
    r(
        "sendgrid-api-key",
        "SendGrid API key",
        High,
        &["sg."],
        r"\b(SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})\b",
        1,
        3.0,
    ),
    r("twilio-api-key", "Twilio API key", High, &["sk"], r"\b(SK[0-9a-f]{32})\b", 1, 3.0),
    r(
        "stripe-secret-key",
        "Stripe secret or restricted key",
        Critical,
        &["sk_live_", "rk_live_", "sk_test_", "rk_test_"],
        r"\b((?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,247})\b",
        1,
        3.0,
    ),
    r(
        "anthropic-api-key",
        "Anthropic API key",
        Critical,
        &["sk-ant-"],
        r"\b(sk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_\-]{80,120})",
        1,
        3.0,
    ),
    r(
        "openai-api-key",
        "OpenAI API key (project, service account, legacy)",
        Critical,
        &["sk-proj-", "sk-svcacct-", "sk-admin-", "t3blbkfj"],
        r"\b(sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,200}|sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20})",
        1,
        3.0,
    ),
    r("huggingface-token", "Hugging Face access token", High, &["hf_"], r"\b(hf_[A-Za-z]{34})\b", 1, 3.0),
    r(
        "digitalocean-token",
        "DigitalOcean token",
        High,
        &["dop_v1_", "doo_v1_", "dor_v1_"],
        r"\b((?:dop|doo|dor)_v1_[a-f0-9]{64})\b",
        1,
        3.0,
    ),
    r("npm-token", "npm access token", High, &["npm_"], r"\b(npm_[A-Za-z0-9]{36})\b", 1, 3.0),
    r(
        "pypi-token",
        "PyPI upload token",
        High,
        &["pypi-ageich"],
        r"\b(pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,})",
        1,
        3.0,
    ),
    r(
        "private-key",
        "Private key (PEM), also \\n-escaped in JSON or .env",
        Critical,
        &["private key-----"],
        r"(-----BEGIN[ A-Z0-9]{0,30}PRIVATE KEY-----(?:\\n|\r?\n|\s)+[A-Za-z0-9+/=\s\\]{40,}?(?:\\n|\r?\n|\s)*-----END[ A-Z0-9]{0,30}PRIVATE KEY-----)",
        1,
        0.0,
    ),
    r(
        "jwt",
        "JSON Web Token",
        Medium,
        &["eyj"],
        r"\b(eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,})",
        1,
        3.0,
    ),
    r(
        "url-credentials",
        "Password embedded in a URL",
        High,
        &["://"],
        r"\b[a-zA-Z][a-zA-Z0-9+.\-]{1,20}://[^\s\x00-\x1f:@/'\x22\[\]…]{1,64}:([^\s\x00-\x1f@/'\x22\[\]…]{3,128})@[a-zA-Z0-9.\-_\[\]]+",
        1,
        0.0,
    ),
    r(
        "authorization-header",
        "Authorization header with a Bearer or Basic credential",
        High,
        &["bearer", "basic"],
        r"(?i)authorization\x22?\s*[:=]\s*\x22?(?:bearer|basic|token)\s+([A-Za-z0-9_\-\.=:/+]{16,})",
        1,
        3.0,
    ),
    r(
        "generic-secret-assignment",
        "Password, secret or token assigned in code, config, shell or JSON",
        Medium,
        &["pass", "secret", "token", "api_key", "apikey", "api-key", "pwd", "credential", "auth_key", "private_key"],
        r#"(?i)(?:^|[\s,{;(\x22'`]|\\n|\+)[A-Za-z0-9_.\-]*(?:password|passwd|pwd|secret|token|api[_\-]?key|apikey|access[_\-]?key|auth[_\-]?key|private[_\-]?key|credentials?)[A-Za-z0-9_.\-]*(?:\\?\x22|')?\s*(?::=|=>|[:=])\s*(?:\\?\x22|'|`)?([^\s\x22'`\\,;]{8,200})"#,
        1,
        3.0,
    ),
];
