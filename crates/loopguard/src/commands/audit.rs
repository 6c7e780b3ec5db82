use super::*;

pub(super) fn logs(env: &Env, which: &LogSelect) -> Result<Vec<loopguard_audit::AuditLog>, String> {
    if let Some(p) = &which.log {
        return Ok(vec![loopguard_audit::AuditLog::new(p)]);
    }
    let home = env.state_home()?;
    if which.all {
        let dir = home.join("audit");
        let mut v: Vec<PathBuf> = match std::fs::read_dir(&dir) {
            Ok(rd) => rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(format!("cannot list {}: {e}", dir.display())),
        };
        v.sort();
        let bg = home.join("break-glass.jsonl");
        if bg.exists() {
            v.push(bg);
        }
        return Ok(v.into_iter().map(loopguard_audit::AuditLog::new).collect());
    }
    Ok(vec![state::audit_log(&home, &env.workspace_for(&cwd()?))])
}

pub fn run(env: &Env, command: AuditCommand) -> Result<ExitCode, String> {
    match command {
        // Served by `loopguard-console`: the hook's binary links no database client.
        AuditCommand::Verify { fleet: true, .. } => super::console::delegate(),
        AuditCommand::Verify { which, .. } => {
            let state = env.state_home()?;
            let mut all_ok = true;
            let logs = logs(env, &which)?;
            if logs.is_empty() {
                println!("no audit logs");
            }
            for log in logs {
                let v = loopguard::audit_cli::verify(&state, &log)?;
                println!("{}", v.render());
                all_ok &= v.ok;
            }
            Ok(if all_ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        AuditCommand::Checkpoint { which } => {
            let state = env.state_home()?;
            for log in logs(env, &which)? {
                println!("{}", loopguard::audit_cli::checkpoint(&state, &log)?);
            }
            Ok(ExitCode::SUCCESS)
        }
        AuditCommand::Summary { which, json } => {
            let state = env.state_home()?;
            for log in logs(env, &which)? {
                let summary = loopguard::audit_cli::summary(&state, &log)?;
                if json {
                    println!("{}", serde_json::to_string_pretty(&summary).map_err(|e| e.to_string())?);
                } else {
                    print!("{}", summary.render());
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        AuditCommand::Export { which, json: _ } => {
            let state = env.state_home()?;
            for log in logs(env, &which)? {
                print!("{}", loopguard::audit_cli::export(&state, &log)?);
            }
            Ok(ExitCode::SUCCESS)
        }
        AuditCommand::Tail { which, lines, json } => {
            for log in logs(env, &which)? {
                for ev in log.tail(lines).map_err(|e| e.to_string())? {
                    if json {
                        println!("{}", ev.to_line());
                    } else {
                        println!("{}", loopguard::demo::describe_event(&ev));
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
