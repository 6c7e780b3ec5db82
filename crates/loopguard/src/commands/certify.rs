use super::*;

pub fn run(env: &Env, args: CertifyArgs) -> Result<ExitCode, String> {
    let CertifyArgs { reviewed_head, verify, allow_dirs, run_id, operator, passphrase_stdin, check } = args;
    let t = loopguard::control::Target::of(env, &cwd()?)?;
    let report = if check {
        loopguard::certify::check(env, &t)?
    } else {
        let req = loopguard::certify::Request {
            reviewed_head: reviewed_head.unwrap_or_default(),
            verify,
            allow_dirs,
            run_id,
            operator: operator.unwrap_or_default(),
        };
        loopguard::certify::certify(env, &t, &req, &mut secrets(passphrase_stdin))?
    };
    print!("{}", report.render());
    Ok(if report.certified { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
