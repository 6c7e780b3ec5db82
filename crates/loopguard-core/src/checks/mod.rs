//! The checks the gate runs. Each returns findings; the gate combines them.

pub mod path_rules;
pub mod paths;
pub mod shell;
pub mod ssrf;
