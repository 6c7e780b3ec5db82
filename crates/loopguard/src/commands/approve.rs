use super::*;

pub fn run(env: &Env, args: ApproveArgs) -> Result<ExitCode, String> {
    let ApproveArgs { operator, reason, passphrase_stdin, status } = args;
    let t = loopguard::control::Target::of(env, &cwd()?)?;
    if status {
        let status = loopguard::control::approval_status(env, &t)?;
        print!("{}", status.render());
        return Ok(if status.ok() { ExitCode::SUCCESS } else { ExitCode::from(1) });
    }
    let (operator, reason) = (operator.unwrap_or_default(), reason.unwrap_or_default());
    print!("{}", loopguard::control::approve(env, &t, &operator, &reason, &mut secrets(passphrase_stdin))?);
    Ok(ExitCode::SUCCESS)
}
