use super::*;
use loopguard::install::{self as inst, hosts};

pub fn run(env: &Env, args: InstallArgs) -> Result<ExitCode, String> {
    let InstallArgs { host, all, target, dry_run, form } = args;
    if form.is_some() && host != Some(Host::Copilot) {
        return Err("--form is for `install copilot` only".into());
    }
    let form = form.map(|f| match f {
        CopilotFormArg::Pascal => hosts::CopilotForm::Pascal,
        CopilotFormArg::Camel => hosts::CopilotForm::Camel,
    });
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the loopguard binary: {e}"))?;
    let hosts = match host {
        Some(h) => vec![h],
        None if all => {
            let found: Vec<Host> = Host::ALL.into_iter().filter(|h| present(env, *h)).collect();
            if found.is_empty() {
                return Err("found no agent host on this machine (no CLI on PATH, no configuration in HOME)".into());
            }
            found
        }
        None => return Err("name a host, or --all".into()),
    };
    for h in hosts {
        // `--all` wires each host where it loads in every folder: the user level.
        let user = target.user || all;
        let report = install(env, h, (user, target.project, target.settings.clone()), &exe, form, dry_run)
            .map_err(|e| format!("{}: {e}", h.name()))?;
        if all {
            print!("{}: {}", h.name(), report.render());
        } else {
            print!("{}", report.render());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Installs `host`'s hooks at `(user, project, file)`.
fn install(
    env: &Env,
    host: Host,
    (user, project, file): (bool, bool, Option<PathBuf>),
    exe: &std::path::Path,
    form: Option<hosts::CopilotForm>,
    dry_run: bool,
) -> Result<inst::Installed, String> {
    let home = || env.home.clone().ok_or_else(|| "HOME is not set".to_string());
    let at_project = |rel: &str| -> Result<PathBuf, String> { Ok(cwd()?.join(rel)) };
    match host {
        Host::ClaudeCode => {
            let path = match (user, file) {
                (_, Some(p)) => p,
                (true, None) => home()?.join(".claude/settings.json"),
                (false, None) => at_project(".claude/settings.json")?,
            };
            inst::install_claude_code(&path, exe, dry_run)
        }
        Host::Codex => {
            let codex_home = codex_home(env)?;
            let path = match (project, file) {
                (_, Some(p)) => p,
                (true, None) => at_project(".codex/hooks.json")?,
                (false, None) => codex_home.join("hooks.json"),
            };
            hosts::install_codex(&codex_home, &path, exe, dry_run)
        }
        Host::Gemini => {
            let path = match (project, file) {
                (_, Some(p)) => p,
                (true, None) => at_project(".gemini/settings.json")?,
                (false, None) => home()?.join(".gemini/settings.json"),
            };
            hosts::install_gemini(&path, exe, dry_run)
        }
        Host::Copilot => {
            let path = match (project, file) {
                (_, Some(p)) => p,
                (true, None) => at_project(".github/hooks/loopguard.json")?,
                (false, None) => hosts::copilot_hooks_file(&copilot_home(env)?),
            };
            let mut report = hosts::install_copilot(&path, exe, form, dry_run)?;
            if project && !dry_run {
                report.notes.push("Copilot CLI loads repository hooks in `-p` mode only in a trusted folder (`--trust-folder`, or trust saved by an interactive run); otherwise it skips them silently".into());
            }
            Ok(report)
        }
        Host::Cursor => {
            let path = match (project, file) {
                (_, Some(p)) => p,
                (true, None) => at_project(".cursor/hooks.json")?,
                (false, None) => home()?.join(".cursor/hooks.json"),
            };
            hosts::install_cursor(&path, exe, dry_run)
        }
    }
}

fn codex_home(env: &Env) -> Result<PathBuf, String> {
    hosts::codex_home(env.home.as_deref()).ok_or_else(|| "neither CODEX_HOME nor HOME is set".into())
}

fn copilot_home(env: &Env) -> Result<PathBuf, String> {
    hosts::copilot_home(env.home.as_deref()).ok_or_else(|| "neither COPILOT_HOME nor HOME is set".into())
}

/// Whether a host is on this machine: its CLI on PATH, or its configuration directory.
pub(crate) fn present(env: &Env, host: Host) -> bool {
    let (bins, dir): (&[&str], Option<PathBuf>) = match host {
        Host::ClaudeCode => (&["claude"], env.home.as_ref().map(|h| h.join(".claude"))),
        Host::Codex => (&["codex"], codex_home(env).ok()),
        Host::Gemini => (&["gemini"], env.home.as_ref().map(|h| h.join(".gemini"))),
        Host::Copilot => (&["copilot"], copilot_home(env).ok()),
        Host::Cursor => (&["cursor-agent", "cursor"], env.home.as_ref().map(|h| h.join(".cursor"))),
    };
    let on_path = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| bins.iter().any(|b| d.join(b).is_file())));
    on_path || dir.is_some_and(|d| d.is_dir())
}
