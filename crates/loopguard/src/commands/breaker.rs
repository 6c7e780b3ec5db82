use super::*;

pub fn run(env: &Env, command: BreakerCommand) -> Result<ExitCode, String> {
    use loopguard::control;
    let t = control::Target::of(env, &cwd()?)?;
    match command {
        BreakerCommand::Status { json } => {
            let status = control::status(env, &t)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&status).map_err(|e| e.to_string())?);
            } else {
                print!("{}", status.render());
            }
            Ok(if status.tripped { ExitCode::from(1) } else { ExitCode::SUCCESS })
        }
        BreakerCommand::Check => {
            let tripped = control::status(env, &t)?.tripped;
            println!("{}", if tripped { "tripped" } else { "ok" });
            Ok(if tripped { ExitCode::from(1) } else { ExitCode::SUCCESS })
        }
        BreakerCommand::Reset { operator, reason, trigger, passphrase_stdin } => {
            let mut s = secrets(passphrase_stdin);
            print!("{}", control::reset(env, &t, &operator, &reason, trigger.as_deref(), &mut s)?);
            Ok(ExitCode::SUCCESS)
        }
        BreakerCommand::Trip { to, reason } => {
            print!("{}", control::trip(&t, &to, &reason, None)?);
            Ok(ExitCode::SUCCESS)
        }
        BreakerCommand::Flush { quiet } => {
            let policy =
                loopguard::effective::load(env, &t.workspace).map_err(|e| format!("the policy does not load: {e}"))?;
            let base = std::env::var("LOOPGUARD_WEBHOOK_BACKOFF_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(1000);
            let r = loopguard::effects::flush(env, policy.breaker().webhook_url.as_deref(), base)?;
            if !quiet {
                println!(
                    "{} trip effect(s) carried out, {} webhook event(s) delivered, {} given up",
                    r.effects, r.delivered, r.failed
                );
            }
            Ok(if r.failed > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
        }
        BreakerCommand::WebhookKey => {
            println!("{}", loopguard::effects::webhook_key(&t.state)?);
            Ok(ExitCode::SUCCESS)
        }
    }
}
