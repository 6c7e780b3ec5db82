use super::*;

pub fn run(env: &Env, command: GrantCommand) -> Result<ExitCode, String> {
    use loopguard::control;
    let t = control::Target::of(env, &cwd()?)?;
    let out = match command {
        GrantCommand::Add { operator, tool, resource, duration, session, reason, allow_broad, passphrase_stdin } => {
            control::grant_add(
                &t,
                &operator,
                &tool,
                resource.as_deref(),
                duration.as_deref(),
                session.as_deref(),
                &reason,
                allow_broad,
                &mut secrets(passphrase_stdin),
            )?
        }
        GrantCommand::List { json } => {
            let list = control::grant_list(env, &t)?;
            if json { serde_json::to_string_pretty(&list).map_err(|e| e.to_string())? + "\n" } else { list.render() }
        }
        GrantCommand::Revoke { id, operator, passphrase_stdin } => {
            control::grant_revoke(&t, &operator, id, &mut secrets(passphrase_stdin))?
        }
    };
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}
