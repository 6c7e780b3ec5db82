use super::*;

pub fn run(env: &Env, command: YoloCommand) -> Result<ExitCode, String> {
    let t = loopguard::control::Target::of(env, &cwd()?)?;
    let out = match command {
        YoloCommand::On { operator, duration, reason, passphrase_stdin } => {
            loopguard::control::yolo_on(env, &t, &operator, &duration, &reason, &mut secrets(passphrase_stdin))?
        }
        YoloCommand::Off => loopguard::control::yolo_off(&t)?,
    };
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}
