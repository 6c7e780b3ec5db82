use super::*;

pub fn run(env: &Env, command: PolicyCommand) -> Result<ExitCode, String> {
    match command {
        PolicyCommand::Check { file, layer } => policy_check(env, file, layer),
        PolicyCommand::Packs { json, markdown } => {
            if markdown {
                print!("{}", loopguard_core::packs::markdown());
                return Ok(ExitCode::SUCCESS);
            }
            let rows = loopguard::packs_report::rows(&effective_policy(env)?);
            if json {
                println!("{}", serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())?);
            } else {
                print!("{}", loopguard::packs_report::human(&rows));
            }
            Ok(ExitCode::SUCCESS)
        }
        PolicyCommand::Show { effective: _ } => {
            print!("{}", effective_policy(env)?.to_effective_toml());
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The policy as the hook sees it for the current directory: an approved, undrifted project
/// policy may loosen.
fn effective_policy(env: &Env) -> Result<Policy, String> {
    let workspace = env.workspace_for(&cwd()?);
    loopguard::effective::load(env, &workspace).map_err(|e| format!("the policy does not load:\n{e}"))
}

fn policy_check(env: &Env, file: Option<PathBuf>, layer: Option<LayerArg>) -> Result<ExitCode, String> {
    let files: Vec<(LayerKind, PathBuf)> = match file {
        Some(f) => {
            let kind = match layer {
                Some(LayerArg::User) => LayerKind::User,
                Some(LayerArg::Project) => LayerKind::Project,
                None if f.ends_with(".loopguard/policy.toml") => LayerKind::Project,
                None => LayerKind::User,
            };
            if !f.exists() {
                return Err(format!("{} does not exist", f.display()));
            }
            vec![(kind, f)]
        }
        None => {
            let workspace = env.workspace_for(&cwd()?);
            let mut v = Vec::new();
            if let Some(u) = env.user_policy() {
                v.push((LayerKind::User, u));
            }
            v.push((LayerKind::Project, state::project_policy(&workspace)));
            v
        }
    };
    let mut texts = Vec::new();
    for (kind, path) in &files {
        match std::fs::read_to_string(path) {
            Ok(t) => texts.push((*kind, path.clone(), t)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        }
    }
    match Policy::from_layers(&texts) {
        Ok(policy) => {
            for (kind, path, _) in &texts {
                println!("ok: {} ({} layer)", path.display(), kind.as_str());
            }
            if texts.is_empty() {
                println!("ok: no policy files; the built-in policy applies");
            }
            let grants =
                loopguard_core::permissions::PermissionStore { grants: policy.grants().to_vec(), revoked_at: None };
            for w in grants.warnings() {
                println!("warning: {w}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            let sources: Vec<(PathBuf, String)> = texts.into_iter().map(|(_, p, t)| (p, t)).collect();
            eprint!("{}", diag::render(&e, &sources));
            eprintln!(
                "{} problem(s); while the policy does not load, the hook denies every call.",
                e.diagnostics.len()
            );
            Ok(ExitCode::from(1))
        }
    }
}
