//! `loopguard`: the thin binary. Flags are parsed here; everything else lives in the libraries.

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;

mod cli;
mod commands;

use cli::*;

fn main() -> ExitCode {
    // The hook is parsed by hand first: it must answer even if flag parsing would exit(1).
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("hook") {
        return commands::hook::main(&args);
    }
    if args.get(1).map(String::as_str) == Some("__exec-inner") {
        return commands::exec::inner(&args[2..]);
    }
    if args.get(1).map(String::as_str) == Some("__session-holder") {
        let Some(dir) = args.get(2) else { return ExitCode::from(2) };
        return match loopguard::exec_session::holder_main(std::path::Path::new(dir)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("loopguard session: {e}");
                ExitCode::from(2)
            }
        };
    }
    if args.get(1).map(String::as_str) == Some("__adversary-inner") {
        // ROOT REAL_HOME: isolate, prove it, attack, print the report.
        let (Some(root), Some(home)) = (args.get(2), args.get(3)) else {
            eprintln!("loopguard adversary: bad internal arguments");
            return ExitCode::from(2);
        };
        return match loopguard::adversary::inner(std::path::Path::new(root), std::path::Path::new(home)) {
            Ok(report) => match serde_json::to_string(&report) {
                Ok(text) => {
                    println!("{text}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("loopguard adversary: {e}");
                    ExitCode::from(2)
                }
            },
            Err(e) => {
                eprintln!("{e}");
                ExitCode::from(2)
            }
        };
    }
    if args.get(1).map(String::as_str) == Some("__preview-inner") {
        // WORKSPACE UPPER WORK TMP -- CMD…
        let a = &args[2..];
        if a.len() < 6 || a[4] != "--" {
            eprintln!("loopguard preview: bad internal arguments");
            return ExitCode::from(125);
        }
        let p = |i: usize| PathBuf::from(&a[i]);
        return match loopguard::exec::preview_inner(&p(0), &p(1), &p(2), &p(3), &a[5..]) {
            Ok(never) => match never {},
            Err(e) => {
                eprintln!("loopguard preview: {e}");
                ExitCode::from(125)
            }
        };
    }
    // `exec` wraps every Bash call the hook allows: its usual form is read by hand (building
    // clap's parser for the whole CLI costs about 0.3 ms); anything else goes to clap.
    let fast =
        (args.get(1).map(String::as_str) == Some("exec")).then(|| commands::exec::fast_args(&args[2..])).flatten();
    let cli = match fast {
        Some(command) => Cli { command },
        None => Cli::parse(),
    };
    match commands::run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("loopguard: error: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Cli, Command, ExecArgs};
    use crate::commands::exec::fast_args as exec_args;
    use crate::commands::hook::parse_hook_args;
    use clap::Parser;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn hook_arguments() {
        use crate::cli::Host;
        assert_eq!(parse_hook_args(&args(&["claude-code"])), Some((Host::ClaudeCode, 2000, None)));
        assert_eq!(
            parse_hook_args(&args(&["claude-code", "--deadline-ms", "500"])),
            Some((Host::ClaudeCode, 500, None))
        );
        assert_eq!(parse_hook_args(&args(&["codex", "--deadline-ms=750"])), Some((Host::Codex, 750, None)));
        let camel = Some((Host::Copilot, 2000, Some("preToolUse".to_string())));
        assert_eq!(parse_hook_args(&args(&["copilot", "--event", "preToolUse"])), camel);
        assert_eq!(parse_hook_args(&args(&["copilot", "--event=preToolUse"])), camel);
        assert_eq!(
            parse_hook_args(&args(&["copilot", "--event", "agentStop", "--deadline-ms", "300"])),
            Some((Host::Copilot, 300, Some("agentStop".to_string())))
        );
        for host in Host::ALL {
            assert_eq!(parse_hook_args(&args(&[host.name()])).map(|(h, _, _)| h), Some(host));
        }
        for bad in [
            &[][..],
            &["Codex"],
            &["claude"],
            &["claude-code", "--deadline-ms"],
            &["claude-code", "--deadline-ms", "5"],
            &["claude-code", "--deadline-ms", "x"],
            &["claude-code", "extra"],
            &["claude-code", "--deadline-ms", "99999999"],
            &["claude-code", "--deadline-ms", "500", "--deadline-ms", "600"],
            // `--event` is for Copilot's camelCase hooks only, once, and names something.
            &["claude-code", "--event", "PreToolUse"],
            &["copilot", "--event"],
            &["copilot", "--event="],
            &["copilot", "--event", "preToolUse", "--event", "postToolUse"],
        ] {
            assert_eq!(parse_hook_args(&args(bad)), None, "{bad:?}");
        }
    }

    /// The hand parser for `exec` reads exactly what clap would, and hands every other form to it.
    #[test]
    fn exec_arguments_read_by_hand_agree_with_clap() {
        let fields = |c: Command| match c {
            Command::Exec(ExecArgs { profile, net, argv, .. }) => Some((profile, net, argv)),
            _ => None,
        };
        let cases: &[&[&str]] = &[
            &["--", "true"],
            &["--net", "--", "bash", "-c", "echo --net"],
            &["--profile", "read-only", "--", "ls", "-la"],
            &["--profile=read-only", "--net", "--", "x", "--", "y"],
            &["--net", "--profile", "workspace-write", "--", "--profile"],
        ];
        for case in cases {
            let fast = exec_args(&args(case)).and_then(fields).unwrap_or_else(|| panic!("not read by hand: {case:?}"));
            let mut full = vec!["loopguard", "exec"];
            full.extend_from_slice(case);
            let clap = Cli::try_parse_from(full).ok().and_then(|c| fields(c.command));
            assert_eq!(Some(fast), clap, "{case:?}");
        }
        for other in [
            &[][..],
            &["--"],
            &["--help"],
            &["true"],
            &["--net", "--net", "--", "true"],
            &["--profile"],
            &["--profile", "a", "--profile", "b", "--", "true"],
            &["--verbose", "--", "true"],
        ] {
            assert!(exec_args(&args(other)).is_none(), "{other:?}");
        }
    }
}
