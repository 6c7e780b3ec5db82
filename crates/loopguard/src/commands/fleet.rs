use super::*;

/// This host's fleet membership, from the effective policy of the current directory.
pub(crate) fn member(env: &Env) -> Result<loopguard::fleet::Member, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?;
    let policy = loopguard::effective::load(env, &env.workspace_for(&cwd))
        .map_err(|e| format!("the policy does not load: {e}"))?;
    loopguard::fleet::Member::of(&policy).ok_or_else(|| {
        "this host belongs to no fleet: add [fleet] with database_url to the user policy (docs/fleet.md)".into()
    })
}

pub fn run(env: &Env, command: FleetCommand) -> Result<ExitCode, String> {
    let m = member(env)?;
    let state = env.state_home()?;
    let db = |e: postgres::Error| loopguard::fleet::describe(&e);
    match command {
        FleetCommand::Migrate => {
            let mut client = loopguard::fleet::connect(&m.settings)?;
            let applied = loopguard::fleet::schema::migrate(&mut client).map_err(db)?;
            let now = loopguard::fleet::schema::current(&mut client).map_err(db)?;
            match applied.as_slice() {
                [] => println!("the fleet's schema is up to date (version {now})"),
                v => println!("applied migration(s) {v:?}; the fleet's schema is at version {now}"),
            }
        }
        FleetCommand::Agent { once } => loopguard::fleet::agent::run(&state, &m, once)?,
        FleetCommand::Set { position, group, reason } => set(&state, &m, &position, group, &reason)?,
        FleetCommand::Stop { group, reason } => set(&state, &m, "stopped", group, &reason)?,
        FleetCommand::Budget { command } => return budget(&state, &m, command),
        FleetCommand::Install { force, now } => install(env, &state, force, now)?,
        FleetCommand::Forget { host } => {
            let mut client = loopguard::fleet::connect(&m.settings)?;
            let n = loopguard::fleet::reserve::forget(&mut client, &m.settings.name, &host)?;
            println!("fleet {}: host {host} forgotten; {n} reservation(s) given back", m.settings.name);
        }
        FleetCommand::Status { json } => {
            let mirror = loopguard::fleet::agent::mirror(&state, &m)?;
            // The key this state home signs with, created now if nothing has signed yet: an
            // operator's first step is to pin it.
            let key = match loopguard::keys::trusted(&state)? {
                Some(k) => k,
                None => loopguard::keys::signing(&state)?.verifying_key(),
            };
            let key = Some(loopguard_audit::hex(key.as_bytes()));
            let cap = mirror.cap(m.settings.group.as_deref()).map(|(p, s)| (p.as_str(), s.version, s.reason.clone()));
            if json {
                let v = serde_json::json!({ "fleet": m.settings.name, "host": m.host, "group": m.settings.group,
                    "cap": cap, "scopes": mirror.scopes, "refused": mirror.refused, "operator_key": key,
                    "budgets": mirror.budgets });
                println!("{}", serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?);
            } else {
                println!("fleet {} · host {} · database {}", m.settings.name, m.host, m.settings.redacted_url());
                match cap {
                    Some((p, v, r)) => println!("capped at {p} by the fleet (version {v}): {r}"),
                    None => println!("no cap from the fleet"),
                }
                for r in &mirror.refused {
                    println!("refused: {r}");
                }
                for a in &mirror.budgets {
                    let usd = a.usd_limit.map(|l| {
                        format!(
                            "{} of {} a day",
                            loopguard::fleet::budget::dollars(a.granted.usd),
                            loopguard::fleet::budget::dollars(l)
                        )
                    });
                    let tokens = a.token_limit.map(|l| format!("{} of {l} tokens a day", a.granted.tokens));
                    let what = [usd, tokens].into_iter().flatten().collect::<Vec<_>>().join(", ");
                    println!(
                        "budget {} ({}): reserved here {what}",
                        a.scope,
                        if a.day.is_empty() { "not reserved yet" } else { &a.day }
                    );
                }
                if let Some(k) = key {
                    println!("this state home's key (pin it in operator_keys to let it lift positions): {k}");
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn set(
    state: &std::path::Path,
    m: &loopguard::fleet::Member,
    position: &str,
    group: Option<String>,
    reason: &str,
) -> Result<(), String> {
    let key = loopguard::keys::signing(state)?;
    let scope = group.map_or_else(|| "*".to_string(), |g| format!("group:{g}"));
    let mut client = loopguard::fleet::connect(&m.settings)?;
    let version = loopguard::fleet::set_position(&mut client, &m.settings.name, &scope, position, reason, &key)?;
    println!("fleet {} {scope} set to {position} (version {version})", m.settings.name);
    Ok(())
}

/// `audit verify --fleet`.
pub fn verify(
    env: &Env,
    silent_after: i64,
    json: bool,
    host_keys: Option<&std::path::Path>,
) -> Result<ExitCode, String> {
    let m = member(env)?;
    let pinned = host_keys.map(read_host_keys).transpose()?;
    let mut client = loopguard::fleet::connect(&m.settings)?;
    let v = loopguard::fleet::verify::verify(&mut client, &m.settings.name, silent_after, pinned.as_ref())
        .map_err(|e| loopguard::fleet::describe(&e))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?);
    } else {
        print!("{}", v.render());
    }
    Ok(if v.ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// `dashboard`.
pub fn dashboard(env: &Env, args: DashboardArgs) -> Result<ExitCode, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?;
    let mut workspaces: Vec<PathBuf> = args.workspace.iter().map(|w| cwd.join(w)).collect();
    workspaces.push(env.workspace_for(&cwd));
    loopguard::dashboard::run(env, loopguard::dashboard::Options { bind: args.bind, workspaces })?;
    Ok(ExitCode::SUCCESS)
}

/// `fleet budget …`.
fn budget(state: &std::path::Path, m: &loopguard::fleet::Member, command: BudgetCommand) -> Result<ExitCode, String> {
    use loopguard::fleet::{budget::dollars, reserve};
    let mut client = loopguard::fleet::connect(&m.settings)?;
    let fleet = &m.settings.name;
    match command {
        BudgetCommand::Set { scope, usd, tokens } => {
            let usd = match usd {
                Some(u) if u.is_finite() && (0.0..=1e9).contains(&u) => Some(loopguard::fleet::budget::micro(u)),
                Some(u) => return Err(format!("--usd must be from 0 to 10^9 dollars, found {u}")),
                None => None,
            };
            let tokens = tokens.map(|t| i64::try_from(t).unwrap_or(i64::MAX));
            if usd.is_none() && tokens.is_none() {
                return Err("a budget needs --usd, --tokens or both (`fleet budget remove` removes one)".into());
            }
            let key = loopguard::keys::signing(state)?;
            let v = reserve::define(&mut client, fleet, &scope, (usd, tokens), &key)?;
            println!("fleet {fleet}: budget {scope} set (version {v}, signed)");
        }
        BudgetCommand::Remove { scope } => {
            let known = reserve::definitions(&mut client, fleet)
                .map_err(|e| loopguard::fleet::describe(&e))?
                .iter()
                .any(|d| d.scope == scope && !d.removed());
            if !known {
                return Err(format!("fleet {fleet} has no budget {scope}"));
            }
            let key = loopguard::keys::signing(state)?;
            let v = reserve::define(&mut client, fleet, &scope, (None, None), &key)?;
            println!("fleet {fleet}: budget {scope} removed (version {v}, signed: hosts that pin this key lift it)");
        }
        BudgetCommand::Status { day, json } => {
            let day = day.unwrap_or_else(|| loopguard::model::day_of(loopguard::effects::now()));
            let ledgers = reserve::ledger(&mut client, fleet, &day).map_err(|e| loopguard::fleet::describe(&e))?;
            let bad = ledgers.iter().any(|l| !l.reconciles || l.over.usd > 0 || l.over.tokens > 0);
            if json {
                println!("{}", serde_json::to_string_pretty(&ledgers).map_err(|e| e.to_string())?);
            } else if ledgers.is_empty() {
                println!("fleet {fleet}: no budget was used on {day}");
            }
            for l in ledgers.iter().filter(|_| !json) {
                let limit = [l.usd_limit.map(dollars), l.token_limit.map(|t| format!("{t} tokens"))];
                println!(
                    "{} on {}: limit {} · reserved {} / {} tokens · spent {} / {} tokens · over {} / {} tokens · {}",
                    l.scope,
                    l.day,
                    limit.into_iter().flatten().collect::<Vec<_>>().join(" and "),
                    dollars(l.granted.usd),
                    l.granted.tokens,
                    dollars(l.spent.usd),
                    l.spent.tokens,
                    dollars(l.over.usd),
                    l.over.tokens,
                    if l.reconciles { "reconciles" } else { "DOES NOT RECONCILE" }
                );
                for h in &l.hosts {
                    println!(
                        "  {}: reserved {} spent {} ({} tokens), over {}, lease until {}",
                        h.host,
                        dollars(h.granted.usd),
                        dollars(h.spent.usd),
                        h.spent.tokens,
                        dollars(h.over.usd),
                        h.lease_until
                    );
                }
            }
            if bad {
                return Ok(ExitCode::from(1));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `HOST KEY` per line (`#` comments, blank lines skipped); a line that is not that is an error.
fn read_host_keys(path: &std::path::Path) -> Result<std::collections::BTreeMap<String, String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = std::collections::BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut parts = line.split_whitespace();
        match (parts.next(), parts.next(), parts.next()) {
            (Some(host), Some(key), None) if loopguard_audit::verifying_key(key).is_some() => {
                out.insert(host.to_string(), key.to_ascii_lowercase());
            }
            _ => {
                return Err(format!(
                    "{} line {}: expected `HOST KEY` (the key: 64 hex digits of an Ed25519 public key)",
                    path.display(),
                    i + 1
                ));
            }
        }
    }
    Ok(out)
}

/// `fleet install`.
fn install(env: &Env, state: &std::path::Path, force: bool, now: bool) -> Result<(), String> {
    use loopguard::fleet::install as unit;
    let home = env.home.clone().ok_or("HOME is not set")?;
    let config = env.xdg_config_home.clone().unwrap_or_else(|| home.join(".config"));
    // The unit runs `loopguard` (beside this binary when installed together), which serves
    // `fleet agent` through loopguard-console.
    let me = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    let exe = me.parent().map(|d| d.join("loopguard")).filter(|p| p.is_file()).unwrap_or(me);
    let text = unit::unit_text(&exe, state, &config, &home)?;
    match unit::install(&unit::unit_path(&config), &text, force)? {
        unit::Installed::Written(p) => println!("wrote {}", p.display()),
        unit::Installed::Unchanged(p) => println!("{} is already up to date", p.display()),
    }
    if now {
        for args in [&["--user", "daemon-reload"][..], &["--user", "enable", "--now", unit::UNIT]] {
            let status = std::process::Command::new("systemctl")
                .args(args)
                .status()
                .map_err(|e| format!("systemctl: {e} (is systemd running for this user?)"))?;
            if !status.success() {
                return Err(format!("systemctl {} failed ({status})", args.join(" ")));
            }
        }
        println!("the fleet agent is enabled and started (`systemctl --user status {}`)", unit::UNIT);
    } else {
        println!("start it with: systemctl --user daemon-reload && systemctl --user enable --now {}", unit::UNIT);
    }
    Ok(())
}
