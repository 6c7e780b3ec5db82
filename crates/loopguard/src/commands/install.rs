use super::*;

pub fn run(env: &Env, args: InstallArgs) -> Result<ExitCode, String> {
    let InstallArgs { host: Host::ClaudeCode, target, dry_run } = args;
    let path = match (target.user, target.settings) {
        (_, Some(p)) => p,
        (true, None) => env.home.clone().ok_or("HOME is not set")?.join(".claude/settings.json"),
        (false, None) => cwd()?.join(".claude/settings.json"),
    };
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the loopguard binary: {e}"))?;
    let report = loopguard::install::install_claude_code(&path, &exe, dry_run)?;
    print!("{report}");
    Ok(ExitCode::SUCCESS)
}
