//! Operators: the humans who may reset breakers and break the glass. A terminal is no proof of a
//! human (an agent can allocate a pseudo-terminal), so each human-only action needs a secret the
//! agent cannot read: the operator's passphrase, stored only as a salted Argon2id hash (PHC
//! string) in the state store, which the gate forbids agents to read or write.

use crate::store::{Store, StoreResult};
use argon2::{Argon2, PasswordHasher, PasswordVerifier};
use std::io::BufRead;

/// Shortest passphrase accepted.
pub const MIN_PASSPHRASE: usize = 12;

/// Where passphrases come from.
pub enum Secrets {
    /// Prompted on the controlling terminal, without echo.
    Terminal,
    /// One line per operator from stdin (`--passphrase-stdin`, for scripts and tests).
    Stdin(Box<dyn BufRead>),
}

impl Secrets {
    /// The passphrase for `name` (`what` says what it is for).
    pub fn get(&mut self, name: &str, what: &str) -> Result<String, String> {
        let line = match self {
            Secrets::Terminal => rpassword::prompt_password(format!("passphrase of operator {name} ({what}): "))
                .map_err(|e| format!("cannot read a passphrase from the terminal ({e}); use --passphrase-stdin"))?,
            Secrets::Stdin(r) => {
                let mut s = String::new();
                r.read_line(&mut s).map_err(|e| format!("cannot read a passphrase from stdin: {e}"))?;
                if s.is_empty() {
                    return Err(format!("stdin ended before the passphrase of operator {name}"));
                }
                s
            }
        };
        Ok(line.trim_end_matches(['\n', '\r']).to_string())
    }
}

/// Hashes a new passphrase.
pub fn hash(passphrase: &str) -> Result<String, String> {
    if passphrase.chars().count() < MIN_PASSPHRASE {
        return Err(format!("the passphrase must have at least {MIN_PASSPHRASE} characters"));
    }
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|e| format!("no randomness for the salt: {e}"))?;
    Argon2::default()
        .hash_password_with_salt(passphrase.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| format!("cannot hash the passphrase: {e}"))
}

/// Checks an operator's passphrase. Unknown operators and wrong passphrases get the same answer.
pub fn verify(store: &mut Store, name: &str, passphrase: &str) -> StoreResult<()> {
    let phc = store.read(|tx| tx.operator(name))?;
    let ok = match phc {
        Some(phc) => Argon2::default().verify_password(passphrase.as_bytes(), phc.as_str()).is_ok(),
        None => {
            // An unknown name costs what a known one does: the answer's time tells nothing.
            let _ = Argon2::default().hash_password_with_salt(passphrase.as_bytes(), &[0u8; 16]);
            false
        }
    };
    if ok { Ok(()) } else { Err(format!("operator `{name}` is unknown or the passphrase is wrong")) }
}

/// Authenticates each named operator (distinct names required).
pub fn authenticate(store: &mut Store, names: &[String], secrets: &mut Secrets, what: &str) -> StoreResult<()> {
    if names.is_empty() {
        return Err("name the operator with --operator NAME".into());
    }
    if store.read(|tx| tx.operator_count())? == 0 {
        return Err("no operator exists yet: a human runs `loopguard operator init --name NAME` first".into());
    }
    for (i, n) in names.iter().enumerate() {
        if names[..i].contains(n) {
            return Err(format!("operator `{n}` is named twice; dual control needs two different operators"));
        }
    }
    for n in names {
        let p = secrets.get(n, what)?;
        verify(store, n, &p)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_salted_and_verify() {
        let d = tempfile::tempdir().unwrap();
        let mut s = Store::open(d.path(), std::time::Duration::from_secs(5)).unwrap();
        let (a, b) = (hash("correct horse battery").unwrap(), hash("correct horse battery").unwrap());
        assert_ne!(a, b, "salted");
        assert!(a.starts_with("$argon2id$"), "{a}");
        assert!(hash("short").is_err());
        s.write(|tx| tx.add_operator("alice", &a, 0, "init")).unwrap();
        assert!(verify(&mut s, "alice", "correct horse battery").is_ok());
        assert!(verify(&mut s, "alice", "wrong horse battery").is_err());
        assert!(verify(&mut s, "bob", "correct horse battery").is_err());
        let mut sec = Secrets::Stdin(Box::new(std::io::Cursor::new("correct horse battery\n")));
        assert!(authenticate(&mut s, &["alice".into()], &mut sec, "test").is_ok());
        let mut sec = Secrets::Stdin(Box::new(std::io::Cursor::new("x\nx\n")));
        let e = authenticate(&mut s, &["alice".into(), "alice".into()], &mut sec, "test").unwrap_err();
        assert!(e.contains("two different operators"), "{e}");
    }
}
