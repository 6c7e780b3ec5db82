use super::*;

pub fn run(env: &Env, args: MergeCheckArgs) -> Result<ExitCode, String> {
    let MergeCheckArgs { range, json } = args;
    let repo = state::git_toplevel(&cwd()?).ok_or("not inside a git repository")?;
    let policy = loopguard::effective::load(env, &repo).map_err(|e| format!("the policy does not load: {e}"))?;
    let report = loopguard::merge_check::run(&repo, &range, &policy, env.home.as_deref())?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?);
    } else {
        print!("{}", loopguard::merge_check::render(&report));
    }
    Ok(if report.eligible { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
