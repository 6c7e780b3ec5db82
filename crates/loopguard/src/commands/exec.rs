use super::*;

pub fn run(env: &Env, args: ExecArgs) -> Result<ExitCode, String> {
    let ExecArgs { profile, net, workspace, argv } = args;
    let profile = loopguard::exec::Profile::parse(&profile)
        .ok_or_else(|| format!("--profile must be workspace-write or read-only, found `{profile}`"))?;
    let workspace = match workspace {
        Some(w) if w.is_absolute() => w,
        Some(w) => return Err(format!("--workspace must be an absolute path, found `{}`", w.display())),
        None => env.workspace_for(&cwd()?),
    };
    let policy = loopguard::effective::load(env, &workspace).map_err(|e| format!("the policy does not load: {e}"))?;
    let revoked = env
        .state_home()
        .ok()
        .and_then(|s| loopguard::hot::read(&s, &state::workspace_key(&workspace)).ok())
        .is_some_and(|d| d.ws.revoked.is_some());
    let roots = loopguard::exec::roots(&workspace, policy.extra_roots());
    // The user may keep the network for commands that download as part of their job.
    let net = net || loopguard::exec::plain_command_named(&argv, policy.exec_network_for());
    let (names, file) = policy.exec_canaries();
    let canaries = if names.is_empty() && !file {
        Vec::new()
    } else {
        let state = env.state_home()?;
        loopguard::exec::plant_canaries(
            &state,
            &state::workspace_key(&workspace),
            names,
            file,
            loopguard::effects::now(),
        )?
    };
    let mut mounts =
        loopguard::exec::Mounts::default_profile(env.home.as_deref(), &roots, env.state_home().ok().as_deref());
    mounts.hide.extend(env.user_policy().and_then(|p| p.parent().map(std::path::Path::to_path_buf)));
    // What the policy calls secret is unreadable inside too (the workspace's own secret files
    // unless `[exec] secrets_for` names the command).
    let workspace_too = !loopguard::exec::plain_command_named(&argv, policy.exec_secrets_for());
    mounts.hide.extend(loopguard::exec::policy_secrets(&policy, env.home.as_deref(), &workspace, workspace_too));
    // No daemon outside takes commands from inside (Docker, systemd, tmux, agents).
    mounts.hide.extend(loopguard::exec::daemon_sockets()?);
    mounts.settle(&roots);
    let mut caches = loopguard::exec::caches(env.home.as_deref());
    // The caches are copy-on-write, in layers of the workspace's own; without a state home
    // there is nowhere to put them, and they stay read-only inside.
    if let Ok(state) = env.state_home() {
        let ws_key = state::workspace_key(&workspace);
        mounts.cow = loopguard::exec::cow_layers(&caches, &state, &ws_key);
        // The workspace's sandbox session (its servers reachable and stoppable from later calls).
        mounts.session =
            loopguard::exec_session::session(&state, &ws_key).map(|s| (s.holder, state.join("sessions").join(&ws_key)));
    }
    // Only a cache with a copy-on-write layer may take writes (into the layer); the rest stay
    // read-only inside.
    caches.retain(|c| mounts.cow.iter().any(|l| &l.lower == c));
    // Files that run later outside (hooks settings, CI workflows, .envrc, …) that do not exist
    // yet cannot be mounted read-only: whatever of them the command creates is taken away after.
    let absent = loopguard::exec::absent_autorun(&roots);
    let code = loopguard::exec::run(
        profile,
        net,
        &roots,
        &caches,
        &mounts,
        policy.exec_env_allow(),
        revoked,
        canaries,
        policy.exec_unenforced_ask(),
        &argv,
    )?;
    let quarantine = env.state_home().ok().map(|s| {
        s.join("quarantine").join(state::workspace_key(&workspace)).join(format!(
            "{}-{}",
            loopguard::effects::now(),
            std::process::id()
        ))
    });
    let (_, stuck) = loopguard::exec::sweep_created(&absent, quarantine.as_deref());
    let code = if stuck && code == 0 { 126 } else { code };
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

/// The inner half's settings, as `__exec-inner` flags carry them.
#[derive(Default)]
struct InnerArgs {
    profile: Option<loopguard::exec::Profile>,
    net: bool,
    ask: bool,
    roots: Vec<PathBuf>,
    tmp: Option<PathBuf>,
    writable: Vec<PathBuf>,
    mounts: loopguard::exec::Mounts,
}

/// Parses `__exec-inner`'s flags up to `--`; the settings and where the command starts. `None`
/// for anything malformed (only loopguard itself writes these).
fn parse_inner(args: &[String]) -> Option<(InnerArgs, usize)> {
    let mut a = InnerArgs::default();
    let mut i = 0;
    while let Some(flag) = args.get(i) {
        let value = |n: usize| args.get(i + n).map(PathBuf::from);
        i += match flag.as_str() {
            "--" => return Some((a, i + 1)),
            "--net" => {
                a.net = true;
                1
            }
            "--unenforced-ask" => {
                a.ask = true;
                1
            }
            "--profile" => {
                a.profile = Some(loopguard::exec::Profile::parse(args.get(i + 1)?)?);
                2
            }
            "--root" => {
                a.roots.push(value(1)?);
                2
            }
            "--tmp" => {
                a.tmp = Some(value(1)?);
                2
            }
            "--write" => {
                a.writable.push(value(1)?);
                2
            }
            "--hide" => {
                a.mounts.hide.push(value(1)?);
                2
            }
            "--ro" => {
                a.mounts.read_only.push(value(1)?);
                2
            }
            "--session" => {
                a.mounts.session = Some((args.get(i + 1)?.parse().ok()?, value(2)?));
                3
            }
            "--cow" => {
                a.mounts.cow.push(loopguard::exec::Layer { lower: value(1)?, upper: value(2)?, work: value(3)? });
                4
            }
            _ => return None,
        };
    }
    None
}

/// The sandboxed half of `loopguard exec` (internal): `--profile P [--net] [--root R]… -- CMD…`.
pub(crate) fn inner(args: &[String]) -> ExitCode {
    let Some((a, at)) = parse_inner(args) else {
        eprintln!("loopguard exec: bad internal arguments");
        return ExitCode::from(126);
    };
    let Some(profile) = a.profile else {
        eprintln!("loopguard exec: bad internal arguments");
        return ExitCode::from(126);
    };
    let argv = args.get(at..).unwrap_or(&[]);
    match loopguard::exec::inner(profile, a.net, &a.roots, a.tmp.as_deref(), &a.writable, &a.mounts, a.ask, argv) {
        Ok(never) => match never {},
        Err(e) => {
            eprintln!("loopguard exec: {e}");
            ExitCode::from(126)
        }
    }
}

/// `[--profile P | --profile=P] [--net] -- CMD…` → `Command::Exec`; `None` for any other form
/// (help, a repeated flag, no `--`), which clap then parses or rejects.
pub(crate) fn fast_args(args: &[String]) -> Option<Command> {
    let (mut profile, mut net, mut workspace) = (None, false, None);
    let mut i = 0;
    loop {
        let a = args.get(i)?.as_str();
        match a {
            "--" => break,
            "--net" if !net => net = true,
            "--profile" if profile.is_none() => {
                i += 1;
                profile = Some(args.get(i)?.clone());
            }
            "--workspace" if workspace.is_none() => {
                i += 1;
                workspace = Some(std::path::PathBuf::from(args.get(i)?));
            }
            _ => match a.strip_prefix("--profile=") {
                Some(p) if profile.is_none() => profile = Some(p.to_string()),
                _ => return None,
            },
        }
        i += 1;
    }
    let argv = args[i + 1..].to_vec();
    if argv.is_empty() {
        return None;
    }
    Some(Command::Exec(ExecArgs { profile: profile.unwrap_or_else(|| "workspace-write".into()), net, workspace, argv }))
}
