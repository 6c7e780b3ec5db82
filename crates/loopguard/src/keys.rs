//! The Ed25519 key that signs audit checkpoints and certifications. The secret seed lives in
//! the state home (`keys/audit.key`, 0600), which the gate forbids the agent to read or write;
//! the public key beside it (`keys/audit.pub`) is what verification trusts, and its fingerprint
//! is printed so a human can compare it with one kept elsewhere.

use loopguard_audit::{SigningKey, VerifyingKey};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

fn dir(state: &Path) -> PathBuf {
    state.join("keys")
}

/// The signing key, created on first use.
pub fn signing(state: &Path) -> Result<SigningKey, String> {
    let secret = dir(state).join("audit.key");
    match std::fs::read_to_string(&secret) {
        Ok(text) => loopguard_audit::signing_key(&text)
            .ok_or_else(|| format!("{} is not a 32-byte hex seed: the audit key is damaged", secret.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut seed = [0u8; 32];
            getrandom::fill(&mut seed).map_err(|e| format!("no randomness for the audit key: {e}"))?;
            let key = SigningKey::from_bytes(&seed);
            loopguard_audit::create_private_dir(&dir(state)).map_err(|e| e.to_string())?;
            // create_new: two first uses racing never end with two different keys on disk.
            let created = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&secret);
            match created {
                Ok(mut f) => {
                    f.write_all(loopguard_audit::hex(&seed).as_bytes()).map_err(|e| e.to_string())?;
                    f.sync_all().map_err(|e| e.to_string())?;
                    let public = loopguard_audit::hex(key.verifying_key().as_bytes());
                    std::fs::write(dir(state).join("audit.pub"), public + "\n").map_err(|e| e.to_string())?;
                    Ok(key)
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => signing(state),
                Err(e) => Err(format!("{}: {e}", secret.display())),
            }
        }
        Err(e) => Err(format!("{}: {e}", secret.display())),
    }
}

/// The trusted public key, if one was ever created.
pub fn trusted(state: &Path) -> Result<Option<VerifyingKey>, String> {
    let public = dir(state).join("audit.pub");
    match std::fs::read_to_string(&public) {
        Ok(text) => loopguard_audit::verifying_key(&text)
            .map(Some)
            .ok_or_else(|| format!("{} is not an Ed25519 public key", public.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: {e}", public.display())),
    }
}

/// A short fingerprint of a public key (first 16 hex digits of its SHA-256).
pub fn fingerprint(key: &VerifyingKey) -> String {
    use sha2::Digest;
    loopguard_audit::hex(&sha2::Sha256::digest(key.as_bytes()))[..16].to_string()
}
