use super::*;

pub fn run(args: FetchArgs) -> Result<ExitCode, String> {
    let FetchArgs { url, max_bytes, timeout } = args;
    let secs = loopguard_core::policy::parse_duration(&timeout)
        .ok_or_else(|| format!("--timeout `{timeout}` is not a duration like 30s"))?;
    let opts =
        loopguard::fetch::FetchOptions { max_bytes, timeout: Duration::from_secs(secs.max(1)), ..Default::default() };
    let got = loopguard::fetch::fetch(&url, &opts, std::sync::Arc::new(loopguard::fetch::SystemLookup))?;
    use std::io::Write;
    std::io::stdout().write_all(&got.body).map_err(|e| format!("cannot write the body: {e}"))?;
    eprintln!("loopguard fetch: {} {} ({} bytes)", got.status, got.url, got.body.len());
    Ok(if (200..300).contains(&got.status) { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
