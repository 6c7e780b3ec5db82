//! What one command does, as data: the files it reads, writes and deletes, the network it
//! reaches, and its destructive operations. Filled by `effects` and its per-family siblings
//! (`effects_git`, `effects_net`, `effects_ops`), which all depend on this leaf and not on each
//! other.

use crate::{AutonomyLevel, RiskLevel};

/// A file target of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// As written (after quote removal and `~` expansion).
    pub path: String,
    /// Only known at run time.
    pub dynamic: bool,
    /// For deletes and recursive changes: the code family used when the target is broad
    /// (`/`, home, a parent of the workspace, the workspace itself). `"rm"` maps to the
    /// `destructive-rm-*` codes.
    pub broad: Option<&'static str>,
}

/// A destructive or dangerous operation found in a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DestructiveOperation {
    /// Stable rule code.
    pub code: &'static str,
    /// Critical ops are denied by default, high ops asked.
    pub risk: RiskLevel,
    /// What it does, for the agent.
    pub message: String,
}

/// Everything one command does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Effects {
    /// Files read.
    pub reads: Vec<Target>,
    /// Files created or changed.
    pub writes: Vec<Target>,
    /// Files deleted.
    pub deletes: Vec<Target>,
    /// Hosts or URLs contacted.
    pub network: Vec<String>,
    /// Destructive operations.
    pub ops: Vec<DestructiveOperation>,
    /// Autonomy level needed.
    pub level: AutonomyLevel,
    /// Inline program text handed to an interpreter (`python -c`), if any.
    pub inline_code: Option<String>,
    /// A command run on another machine (`ssh host CMD`).
    pub remote_script: Option<String>,
    /// Shell text that runs here later (alias values).
    pub local_scripts: Vec<String>,
    /// Paths staged for a commit (`git add`), relative to the git base.
    pub stages: Vec<Target>,
    /// Stages every changed file (`git add -A`, `git add .`, `git commit -a`): the base directory.
    pub stages_all: Option<String>,
    /// Symbolic links created: (link path, link target as written).
    pub links: Vec<(String, String)>,
    /// The HTTP method an HTTP client sends (curl, wget, HTTPie, xh), upper case.
    pub http_method: Option<String>,
}

impl Default for Effects {
    fn default() -> Self {
        Effects {
            reads: Vec::new(),
            writes: Vec::new(),
            deletes: Vec::new(),
            network: Vec::new(),
            ops: Vec::new(),
            level: AutonomyLevel::Implement,
            inline_code: None,
            remote_script: None,
            local_scripts: Vec::new(),
            stages: Vec::new(),
            stages_all: None,
            links: Vec::new(),
            http_method: None,
        }
    }
}

impl Effects {
    pub(crate) fn op(&mut self, code: &'static str, risk: RiskLevel, message: impl Into<String>) {
        self.ops.push(DestructiveOperation { code, risk, message: message.into() });
    }
    pub(crate) fn write(&mut self, w: &super::Word) {
        self.writes.push(Target { path: w.text.clone(), dynamic: w.dynamic, broad: None });
    }
    pub(crate) fn write_text(&mut self, p: &str) {
        self.writes.push(Target { path: p.to_string(), dynamic: false, broad: None });
    }
    pub(crate) fn read(&mut self, w: &super::Word) {
        self.reads.push(Target { path: w.text.clone(), dynamic: w.dynamic, broad: None });
    }
    pub(crate) fn read_text(&mut self, p: &str) {
        self.reads.push(Target { path: p.to_string(), dynamic: false, broad: None });
    }
    pub(crate) fn delete(&mut self, w: &super::Word, broad: Option<&'static str>) {
        self.deletes.push(Target { path: w.text.clone(), dynamic: w.dynamic, broad });
    }
}
