use super::*;

pub fn run(args: ScanArgs) -> Result<ExitCode, String> {
    let ScanArgs { paths, git_diff, staged, all, format, baseline, write_baseline, config } = args;
    use loopguard::scan::{Format, Source};
    let source = match (git_diff, staged) {
        (Some(r), _) => Source::GitDiff(r),
        (None, true) => Source::Staged,
        (None, false) => Source::Paths(if paths.is_empty() { vec![PathBuf::from(".")] } else { paths }),
    };
    let accepted = match &baseline {
        Some(p) => loopguard::scan::read_baseline(p)?,
        None => Default::default(),
    };
    let scanner = loopguard::scan::scanner(config.as_deref())?;
    let report = loopguard::scan::run(&source, all, &accepted, scanner)?;
    if let Some(p) = write_baseline {
        std::fs::write(&p, loopguard::scan::baseline_json(&report))
            .map_err(|e| format!("cannot write {}: {e}", p.display()))?;
    }
    let format = match format {
        FormatArg::Human => Format::Human,
        FormatArg::Json => Format::Json,
        FormatArg::Sarif => Format::Sarif,
    };
    print!("{}", loopguard::scan::render(&report, format));
    Ok(if report.findings.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
