//! The `loopguard` command: host adapters (Claude Code), the audit and policy commands,
//! installation, the doctor and the demo. The deciding happens in `loopguard-core`; this crate
//! only translates and orchestrates.

pub mod adversary;
pub mod advisories;
pub mod approval;
pub mod audit_cli;
pub mod breaker;
pub mod calls;
pub mod certify;
pub mod control;
pub mod dashboard;
pub mod decide;
pub mod demo;
pub mod doctor;
pub mod effective;
pub mod effects;
pub mod engine;
pub mod escalation;
pub mod exec;
pub mod exec_session;
pub mod fetch;
pub mod fleet;
pub mod git;
pub mod hosts;
pub mod hot;
pub mod install;
pub mod journal;
pub mod keys;
pub mod merge_check;
pub mod model;
pub mod operator;
pub mod outgoing;
pub mod packs_report;
pub mod preview;
pub mod scan;
pub mod selftest;
pub mod sessions;
pub mod state;
pub mod store;
