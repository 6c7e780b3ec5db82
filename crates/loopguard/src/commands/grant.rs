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
        GrantCommand::List => control::grant_list(env, &t)?,
        GrantCommand::Revoke { id, operator, passphrase_stdin } => {
            control::grant_revoke(&t, &operator, id, &mut secrets(passphrase_stdin))?
        }
    };
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}
