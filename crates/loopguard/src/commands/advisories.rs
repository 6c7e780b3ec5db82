use super::*;

pub fn run(env: &Env, command: AdvisoriesCommand) -> Result<ExitCode, String> {
    let state = env.state_home()?;
    match command {
        AdvisoriesCommand::Import { source } => {
            let (records, packages, skipped) = loopguard::advisories::import(&state, &source)?;
            println!("imported {records} advisories for {packages} packages");
            if skipped > 0 {
                println!("skipped {skipped} records of ecosystems loopguard does not check");
            }
            Ok(ExitCode::SUCCESS)
        }
        AdvisoriesCommand::Check { files, json } => {
            let files = if files.is_empty() { loopguard::advisories::default_files(&cwd()?) } else { files };
            let workspace = env.workspace_for(&cwd()?);
            let policy =
                loopguard::effective::load(env, &workspace).map_err(|e| format!("the policy does not load: {e}"))?;
            let report = loopguard::advisories::check_files(&state, &files, policy.advisories())?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?);
            } else {
                print!("{}", report.render());
            }
            Ok(if report.found() { ExitCode::from(1) } else { ExitCode::SUCCESS })
        }
    }
}
