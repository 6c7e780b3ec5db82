//! Facts about candidate secret values that both the rule scanner and the contextual detector
//! use: entropy, base64, documented example values and placeholders. A leaf: it depends on
//! neither.

/// Shannon entropy in bits per character.
pub fn shannon(s: &str) -> f32 {
    let mut counts = [0u32; 256];
    let bytes = s.as_bytes();
    for &b in bytes {
        counts[b as usize] += 1;
    }
    let n = bytes.len() as f32;
    if n == 0.0 {
        return 0.0;
    }
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f32 / n;
            -p * p.log2()
        })
        .sum()
}

/// Standard or URL-safe base64, padded or not; `None` if it is not.
pub(crate) fn decode_base64(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=');
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// Values vendors and standards publish in their documentation as examples (facts, for
/// recognising them; a finding of one is a decoy): AWS's example key pair, Stripe's documented
/// test keys, RFC 7617's Basic example (`Aladdin:open sesame`), Azurite's well-known storage key,
/// jwt.io's sample signature, kubeadm's documented bootstrap token, the RFC 6238/Google
/// Authenticator example secret, Slack's documented bot token.
pub(crate) const DOCUMENTED_VALUES: &[&str] = &[
    "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
    "sk_test_BQokikJOvBiI2HlWgH4olfQ2",
    "QWxhZGRpbjpvcGVuIHNlc2FtZQ==",
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "abcdef.0123456789abcdef",
    "JBSWY3DPEHPK3PXP",
    "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy",
    "01234567-89ab-cdef-0123-456789abcdef",
];

/// A token whose base64 body decodes to text naming it an example (documentation's PyPI
/// macaroons say `example-token` inside).
pub(crate) fn says_example_inside(s: &str) -> bool {
    if s.len() < 24 {
        return false;
    }
    let body = s.rsplit(['-', '.', '_']).max_by_key(|p| p.len()).unwrap_or(s);
    decode_base64(body).is_some_and(|d| {
        // Not a host name inside it (`registry.example.io` in a docker config is real data).
        let t = String::from_utf8_lossy(&d).to_ascii_lowercase().replace("example.", "");
        t.contains("example") || t.contains("placeholder") || t.contains("dummy")
    })
}

/// Placeholders, templates and masked values: never secrets.
pub(crate) fn is_placeholder(s: &str) -> bool {
    let l = s.to_ascii_lowercase();
    // The value itself (or a JWT's signature), never a value that merely contains one: a real
    // password with a documented value glued on is still a password.
    DOCUMENTED_VALUES.iter().any(|d| s == *d || (s.starts_with("eyJ") && s.rsplit('.').next() == Some(d)))
        || says_example_inside(s)
        || l.contains("[redacted")
        || l.contains("${")
        || l.contains("{{")
        || l.contains("}}")
        || (l.starts_with('<') && l.ends_with('>'))
        || l.starts_with('$')
        || l.contains("xxxx")
        || l.contains("****")
        || l.contains("...")
        || l.contains('…')
        // Long words may appear anywhere (`AKIAIOSFODNN7EXAMPLE`): in a random token they are
        // vanishingly rare. Short ones only count as a whole word: `todo` or `fake` occur in
        // random base62 keys often enough (proptest found `sk_live_TodO…`) to hide real keys.
        || ["example", "changeme", "change_me", "placeholder", "your_", "your-", "yourpassword", "redacted",
            "sample", "insert", "replace", "notreal", "abc123"]
            .iter()
            .any(|w| l.contains(w))
        || l.split(|c: char| !c.is_ascii_alphanumeric()).any(|seg| matches!(seg, "todo" | "fake" | "dummy"))
        // A common word with a counter: `secret123`, `password1!`, `foo`.
        || {
            let stem = l.trim_end_matches(|c: char| c.is_ascii_digit() || c == '!');
            // Weak real passwords (`Welcome1`, `hunter2024`) stay secrets.
            matches!(stem, "secret" | "password" | "passw0rd" | "pass" | "passwd" | "pwd" | "foo" | "bar" | "baz" | "foobar" | "test" | "demo" | "changeit" | "mypassword" | "mysecret" | "testpassword" | "testpass" | "test_password" | "test-password" | "example" | "sample" | "dummy")
        }
        || s.chars().all(|c| c == s.chars().next().unwrap_or(' '))
        || matches!(
            l.as_str(),
            "password"
                | "passwd"
                | "pass"
                | "pwd"
                | "secret"
                | "token"
                | "changeit"
                | "admin"
                | "root"
                | "test"
                | "user"
                | "guest"
                | "letmein"
                | "hunter2"
                | "qwerty"
                | "123456"
                | "12345678"
                | "password123"
                | "postgres"
                | "mysql"
                | "mariadb"
                | "redis"
                | "rabbitmq"
                | "mongo"
        )
}
