use super::*;

pub fn run(env: &Env, command: OperatorCommand) -> Result<ExitCode, String> {
    match command {
        OperatorCommand::Init { name, by, passphrase_stdin } => {
            let t = loopguard::control::Target::of(env, &cwd()?)?;
            print!("{}", loopguard::control::operator_init(&t, &name, by.as_deref(), &mut secrets(passphrase_stdin))?);
            Ok(ExitCode::SUCCESS)
        }
    }
}
