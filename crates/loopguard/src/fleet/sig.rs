//! Operators' signatures on what they write into the fleet's database (positions, budget
//! definitions), checked by hosts against the keys they pin.

/// An operator's signature over `bytes`: (public key, signature), both hex.
pub fn sign(key: &loopguard_audit::SigningKey, bytes: &[u8]) -> (String, String) {
    (loopguard_audit::hex(key.verifying_key().as_bytes()), loopguard_audit::sign_bytes(key, bytes))
}

/// Whether (`key`, `sig`) is a valid signature over `bytes` by one of `pinned` (hex keys).
pub fn signed_by(pinned: &[String], (key, sig): (&str, &str), bytes: &[u8]) -> bool {
    pinned.iter().any(|p| p.eq_ignore_ascii_case(key))
        && loopguard_audit::verifying_key(key).is_some_and(|k| loopguard_audit::verify_signature(&k, bytes, sig))
}
