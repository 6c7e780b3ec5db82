use super::*;

pub fn run(env: &Env, args: UndoArgs) -> Result<ExitCode, String> {
    let t = loopguard::control::Target::of(env, &cwd()?)?;
    let out = if args.list {
        loopguard::journal::list(&t.state, &t.key)?
    } else {
        let from = match (args.to, args.session.as_deref()) {
            (Some(step), _) => loopguard::journal::From::Step(step),
            (None, Some(session)) => loopguard::journal::From::Session(session.to_string()),
            (None, None) => loopguard::journal::From::Last,
        };
        loopguard::journal::undo(&t.state, &t.workspace, &t.key, from, args.force)?
    };
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}
