use super::*;

pub fn run(env: &Env, args: BreakGlassArgs) -> Result<ExitCode, String> {
    let BreakGlassArgs { operators, scope, duration, reason, passphrase_stdin } = args;
    let t = loopguard::control::Target::of(env, &cwd()?)?;
    let mut s = secrets(passphrase_stdin);
    print!("{}", loopguard::control::break_glass(env, &t, &operators, &scope, duration.as_deref(), &reason, &mut s)?);
    Ok(ExitCode::SUCCESS)
}
