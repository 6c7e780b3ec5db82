//! Network tools: where they connect, what they write, and the shapes of exfiltration (uploading
//! files, reverse shells).

use super::args::{Spec, parse};
use super::effects_types::Effects;
use super::unwrap::Command;
use crate::reasons::*;
use crate::{AutonomyLevel, RiskLevel};

/// Effects of curl, wget, nc, socat, ssh, scp, sftp, telnet, ftp.
pub fn net(c: &Command, e: &mut Effects) {
    match c.program.as_str() {
        "curl" => curl(c, e),
        "wget" | "wget2" => wget(c, e),
        "nc" | "ncat" | "netcat" | "socat" | "telnet" => raw(c, e),
        "ssh" => ssh(c, e),
        "scp" | "sftp" => scp(c, e),
        "http" | "https" | "xh" | "xhs" | "curlie" => httpie(c, e),
        "lwp-request" | "GET" | "HEAD" | "POST" | "PUT" | "DELETE" => lwp(c, e),
        _ => {}
    }
}

/// libwww-perl's `lwp-request` and its aliases `GET`, `POST`, `PUT`, `DELETE`, `HEAD`: the
/// method is the program name or `-m METHOD`; a body is read from stdin for POST and PUT.
fn lwp(c: &Command, e: &mut Effects) {
    let a = parse(&c.args, Spec { short: "mbtiacpPHCo", long: &[] });
    let method = match c.program.as_str() {
        "lwp-request" => a.values(&["-m"]).last().map_or("GET".to_string(), |m| m.to_ascii_uppercase()),
        m => m.to_string(),
    };
    e.level = AutonomyLevel::Observe;
    e.http_method = Some(method);
    // URLs only: `DELETE FROM users;` typed into a shell is SQL, not a request (the SQL pack's).
    e.network
        .extend(a.operands.iter().filter(|w| w.text.contains("://") || w.text.contains('.')).map(|w| w.text.clone()));
}

fn upload(e: &mut Effects, file: &str, how: &str) {
    let file = file.trim_start_matches('@').trim_start_matches('<');
    if file.is_empty() || file == "-" {
        return;
    }
    e.read_text(file);
    e.op(EXFIL_UPLOAD, RiskLevel::High, format!("{how} uploads the file `{file}` to a remote host."));
}

fn curl(c: &Command, e: &mut Effects) {
    let a = parse(
        &c.args,
        Spec {
            short: "dFTohHuXAeEbcKmrwxyYzCQUt",
            long: &[
                "--data",
                "--data-binary",
                "--data-raw",
                "--data-ascii",
                "--data-urlencode",
                "--form",
                "--form-string",
                "--upload-file",
                "--output",
                "--header",
                "--user",
                "--request",
                "--user-agent",
                "--referer",
                "--cert",
                "--cookie",
                "--cookie-jar",
                "--config",
                "--max-time",
                "--range",
                "--write-out",
                "--proxy",
                "--url",
                "--connect-timeout",
                "--retry",
                "--json",
                "--output-dir",
                "--resolve",
                "--connect-to",
                "--key",
                "--cacert",
            ],
        },
    );
    e.level = AutonomyLevel::Observe;
    e.http_method = Some(curl_method(c, &a).to_string());
    for o in &a.opts {
        let v = o.value.as_deref().unwrap_or("");
        match o.name.as_str() {
            "-d" | "--data" | "--data-binary" | "--data-ascii" | "--data-urlencode" | "--json"
                if v.starts_with('@') || v.contains("=@") =>
            {
                upload(e, v.rsplit_once("=@").map_or(v, |(_, f)| f), "curl --data @file")
            }
            "-F" | "--form" => {
                if let Some((_, f)) = v.split_once("=@").or_else(|| v.split_once("=<")) {
                    upload(e, f.split(';').next().unwrap_or(f), "curl -F field=@file");
                }
            }
            "-T" | "--upload-file" => upload(e, v, "curl -T"),
            "-o" | "--output" | "-c" | "--cookie-jar" => {
                e.level = AutonomyLevel::Implement;
                if v != "-" && v != "/dev/null" {
                    e.write_text(v);
                }
            }
            "-O" | "--remote-name" | "--remote-name-all" => {
                e.level = AutonomyLevel::Implement;
                e.write_text(".");
            }
            "-K" | "--config" => {
                if v == "-" {
                    if let Some(t) = &c.stdin_text {
                        curl_config(t, e);
                    }
                } else {
                    e.read_text(v);
                }
            }
            "--url" => e.network.push(v.to_string()),
            _ => {}
        }
    }
    e.network.extend(a.operands.iter().map(|w| w.text.clone()));
}

/// The HTTP method a curl command line sends: `-X` wins; a body makes it POST (GET with `-G`),
/// an upload PUT, `-I` HEAD.
fn curl_method(c: &Command, a: &super::args::Parsed<'_>) -> String {
    // What the command line does not show (a config file, variables expanded into options) may
    // set any method: taken as a write.
    if a.opts
        .iter()
        .any(|o| matches!(o.name.as_str(), "-K" | "--config" | "--variable") || o.name.starts_with("--expand-"))
    {
        return "UNKNOWN".into();
    }
    // A method-override header makes the server act on that method whatever is sent.
    let header_method = a.values(&["-H", "--header"]).find_map(|h| {
        let (k, v) = h.split_once(':')?;
        let k = k.trim().to_ascii_lowercase();
        matches!(k.as_str(), "x-http-method-override" | "x-http-method" | "x-method-override")
            .then(|| v.trim().to_ascii_uppercase())
    });
    if let Some(m) = header_method {
        return m;
    }
    // curl before 8.5 also takes unambiguous prefixes of long options (`--req DELETE`).
    let request = |n: &str| n == "-X" || (n.len() >= 5 && "--request".starts_with(n) && n.starts_with("--req"));
    if let Some(m) = a.opts.iter().rev().find(|o| request(&o.name)).map(|o| o.value.clone()) {
        return match m {
            Some(m) => m.to_ascii_uppercase(),
            // A prefix the spec did not know takes the next word.
            None => c
                .args
                .iter()
                .position(|w| request(w.text.as_str()))
                .and_then(|i| c.args.get(i + 1))
                .map_or("UNKNOWN".into(), |w| w.text.to_ascii_uppercase()),
        };
    }
    let flag = |names: &[&str]| a.opts.iter().any(|o| names.contains(&o.name.as_str()));
    let has = |names: &[&str]| a.values(names).next().is_some();
    if flag(&["-I", "--head"]) {
        "HEAD".into()
    } else if has(&["-T", "--upload-file"]) {
        "PUT".into()
    } else if has(&[
        "-d",
        "--data",
        "--data-binary",
        "--data-raw",
        "--data-ascii",
        "--data-urlencode",
        "--json",
        "-F",
        "--form",
        "--form-string",
    ]) {
        if flag(&["-G", "--get"]) && !flag(&["--no-get"]) { "GET".into() } else { "POST".into() }
    } else {
        "GET".into()
    }
}

fn wget(c: &Command, e: &mut Effects) {
    let a = parse(
        &c.args,
        Spec {
            short: "OoaPiTtUeBw",
            long: &[
                "--output-document",
                "--output-file",
                "--directory-prefix",
                "--post-data",
                "--post-file",
                "--body-file",
                "--header",
                "--user-agent",
                "--input-file",
                "--method",
                "--body-data",
            ],
        },
    );
    // `--method`, any prefix wget accepts (`--meth`), or `-e method=…` (a wgetrc command).
    let set_by_e = a.values(&["-e", "--execute"]).find_map(|v| {
        let (k, v) = v.split_once('=')?;
        (k.trim().eq_ignore_ascii_case("method")).then(|| v.trim().trim_matches(['"', '\'']).to_string())
    });
    let prefixed =
        a.opts.iter().rev().find(|o| o.name.len() >= 5 && "--method".starts_with(o.name.as_str())).map(|o| {
            o.value.clone().or_else(|| {
                let i = c.args.iter().position(|w| w.text == o.name)?;
                c.args.get(i + 1).map(|w| w.text.clone())
            })
        });
    e.http_method = Some(match (prefixed, set_by_e) {
        (Some(Some(m)), _) | (None, Some(m)) => m.to_ascii_uppercase(),
        (Some(None), _) => "UNKNOWN".into(),
        (None, None) if a.values(&["--post-data", "--post-file", "--body-data", "--body-file"]).next().is_some() => {
            "POST".into()
        }
        (None, None) => "GET".into(),
    });
    match a.values(&["-O", "--output-document"]).next() {
        Some("-") => e.level = AutonomyLevel::Observe,
        Some(f) => e.write_text(f),
        None => e.write_text(a.values(&["-P", "--directory-prefix"]).next().unwrap_or(".")),
    }
    for f in a.values(&["--post-file", "--body-file"]) {
        upload(e, f, "wget --post-file");
    }
    // `-i FILE`: URLs read from a file; `-e CMD`: a wgetrc command, some of which send files.
    for f in a.values(&["-i", "--input-file"]) {
        if f != "-" {
            e.read_text(f);
        }
    }
    for cmd in a.values(&["-e", "--execute"]) {
        let (k, v) = cmd.split_once('=').unwrap_or((cmd, ""));
        let key: String =
            k.trim().chars().filter(|ch| !matches!(ch, '_' | '-')).collect::<String>().to_ascii_lowercase();
        let v = v.trim().trim_matches(['"', '\'']);
        match key.as_str() {
            "postfile" | "bodyfile" => upload(e, v, "wget -e post_file"),
            "input" | "loadcookies" | "certificate" | "privatekey" => e.read_text(v),
            _ => {}
        }
    }
    e.network.extend(a.operands.iter().map(|w| w.text.clone()));
}

fn raw(c: &Command, e: &mut Effects) {
    let texts: Vec<&str> = c.args.iter().map(|w| w.text.as_str()).collect();
    let exec = texts.iter().any(|t| {
        matches!(*t, "-e" | "-c" | "--exec" | "--sh-exec" | "--lua-exec")
            || (t.starts_with('-') && !t.starts_with("--") && t.len() > 2 && (t.ends_with('e') || t.ends_with('c')))
    }) || (c.program == "socat"
        && texts
            .iter()
            .any(|t| t.to_ascii_uppercase().starts_with("EXEC:") || t.to_ascii_uppercase().starts_with("SYSTEM:")));
    if exec {
        e.op(
            EXFIL_REVERSE_SHELL,
            RiskLevel::Critical,
            format!("`{}` hands a shell or program to a network peer (a reverse or bind shell).", c.program),
        );
    }
    e.network.extend(texts.iter().filter(|t| !t.starts_with('-')).map(|t| t.to_string()));
}

fn ssh(c: &Command, e: &mut Effects) {
    let a = parse(&c.args, Spec { short: "bcDEeFIiJLlmOopQRSWw", long: &[] });
    // A reverse forward opens a port on the remote machine that leads back into this one.
    let reverse = a.opts.iter().any(|o| {
        o.name == "-R"
            || o.name == "-o"
                && o.value.as_deref().is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("remoteforward"))
    });
    if reverse {
        e.op(
            EXFIL_REVERSE_SHELL,
            RiskLevel::Critical,
            "`ssh -R`/`RemoteForward` hands a port of this machine (and what listens on it) to the remote side."
                .to_string(),
        );
    }
    let mut ops = a.operands.iter();
    if let Some(host) = ops.next() {
        e.network.push(host.text.clone());
        let remote: Vec<&str> = ops.map(|w| w.text.as_str()).collect();
        if !remote.is_empty() {
            e.op(
                SHELL_REMOTE_EXEC,
                RiskLevel::High,
                format!(
                    "`ssh {}` runs `{}` on another machine, outside every local check.",
                    host.text,
                    remote.join(" ")
                ),
            );
            e.remote_script = Some(remote.join(" "));
        } else if c.stdin_text.is_some()
            || !c.stdin_from.is_empty()
            || c.redirects.iter().any(|r| r.kind == super::RedirectKind::Read)
        {
            e.op(
                SHELL_REMOTE_EXEC,
                RiskLevel::High,
                format!("`ssh {}` runs a script fed on stdin on another machine.", host.text),
            );
            e.remote_script = c.stdin_text.clone();
        }
    }
    // `-i key`: ssh uses the key to authenticate; it does not print it, so it is not a read
    // into the agent's context.
}

fn scp(c: &Command, e: &mut Effects) {
    let a = parse(&c.args, Spec { short: "cFiJloPS", long: &[] });
    if let Some((dest, srcs)) = a.operands.split_last() {
        let remote = |t: &str| t.contains(':') && !t.starts_with('/') && !t.starts_with('.');
        for s in srcs {
            if remote(&s.text) {
                e.network.push(s.text.clone());
            } else {
                upload(e, &s.text, "scp");
            }
        }
        if remote(&dest.text) {
            e.network.push(dest.text.clone());
        } else {
            e.write_text(&dest.text);
        }
    }
}

/// HTTPie and xh: `http [METHOD] URL [ITEM…]`. The URL may omit the scheme (`host/path`) or the
/// host (`:3000/path` is localhost); items read files with `@` (`field@file`, `key=@file`,
/// `key:=@file`) and send them.
fn httpie(c: &Command, e: &mut Effects) {
    let a = parse(
        &c.args,
        Spec {
            short: "aAosp",
            long: &[
                "--auth",
                "--auth-type",
                "--output",
                "--session",
                "--session-read-only",
                "--proxy",
                "--verify",
                "--cert",
                "--cert-key",
                "--cert-key-pass",
                "--timeout",
                "--max-redirects",
                "--style",
                "--print",
                "--pretty",
                "--format-options",
                "--response-charset",
                "--response-mime",
                "--boundary",
                "--ssl",
                "--ciphers",
                "--default-scheme",
                "--raw",
                "--unix-socket",
            ],
        },
    );
    e.level = AutonomyLevel::Observe;
    for o in &a.opts {
        let v = o.value.as_deref().unwrap_or("");
        match o.name.as_str() {
            "-o" | "--output" => {
                e.level = AutonomyLevel::Implement;
                e.write_text(v);
            }
            "-d" | "--download" => {
                e.level = AutonomyLevel::Implement;
                e.write_text(".");
            }
            // `--proxy http:http://HOST:PORT`: the proxy's URL after the scheme it serves.
            "--proxy" => e.network.push(v.split_once(':').map_or(v, |(_, u)| u).to_string()),
            _ => {}
        }
    }
    let mut ops = a.operands.iter().map(|w| w.text.as_str()).peekable();
    let mut method = None;
    // The method comes first when a URL follows it, in any case (`http delete host/x`); with a
    // request item second (`http localhost name=x`) the first word is the URL.
    let url_like = |t: &str| {
        let head = t.split('/').next().unwrap_or(t);
        t.contains("://") || t.starts_with(':') || ((t.contains('.') || t.contains('/')) && !head.contains(['=', '@']))
    };
    if a.operands.get(1).is_some_and(|u| url_like(&u.text))
        && ops.peek().is_some_and(|m| m.len() <= 10 && !m.is_empty() && m.chars().all(|ch| ch.is_ascii_alphabetic()))
    {
        method = ops.next().map(|m| m.to_ascii_uppercase());
    }
    // Data items (`key=value`, `key:=json`, `field@file`) or a raw body make it a POST; query
    // (`key==value`) and header (`Header:value`) items do not. `--offline` sends nothing.
    let skip = 1 + usize::from(method.is_some());
    let data_item = |t: &str| match t.find(['=', ':', '@']).map(|i| &t[i..]) {
        Some(r) if r.starts_with("==") => false,
        Some(r) => r.starts_with(":=") || r.starts_with('=') || r.starts_with('@'),
        None => false,
    };
    let items = a.operands.iter().skip(skip).any(|w| data_item(&w.text));
    let body = c.args.iter().any(|w| w.text.starts_with("--raw"));
    if c.args.iter().any(|w| w.text == "--offline") {
        return;
    }
    e.http_method = Some(method.unwrap_or_else(|| if items || body { "POST".into() } else { "GET".into() }));
    if let Some(url) = ops.next() {
        let url = if url.starts_with(':') { format!("localhost{url}") } else { url.to_string() };
        e.network.push(url);
    }
    for item in ops {
        // `key=@file`, `key:=@file`, `field@file` (a form upload); `\@` is a literal `@`.
        let file = ["=@", ":=@"].iter().find_map(|sep| item.split_once(sep).map(|(_, f)| f)).or_else(|| {
            item.split_once('@')
                .filter(|(k, _)| !k.is_empty() && !k.ends_with('\\') && !k.contains(['=', ':']))
                .map(|(_, f)| f)
        });
        if let Some(f) = file {
            upload(e, f, "httpie `@file`");
        }
    }
}

/// A curl config file's text (`-K`): options one per line, `key = value`, `key value` or
/// `--key value`; the ones that send files count as they do on the command line.
pub fn curl_config(text: &str, e: &mut Effects) {
    for line in text.lines().take(256) {
        let line = line.trim();
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let (k, v) = line
            .split_once(['=', ':', ' ', '\t'])
            .map_or((line, ""), |(k, v)| (k.trim(), v.trim().trim_start_matches(['=', ':']).trim()));
        let k = k.trim_start_matches('-');
        let v = v.trim_matches(['"', '\'']);
        match k {
            "data" | "data-binary" | "data-ascii" | "data-urlencode" | "json" | "d" if v.contains('@') => {
                upload(e, v.rsplit_once('@').map_or(v, |(_, f)| f), "curl config `data @file`")
            }
            "upload-file" | "T" => upload(e, v, "curl config `upload-file`"),
            "form" | "F" => {
                if let Some((_, f)) = v.split_once("=@").or_else(|| v.split_once("=<")) {
                    upload(e, f.split(';').next().unwrap_or(f), "curl config `form field=@file`");
                }
            }
            "url" => e.network.push(v.to_string()),
            _ => {}
        }
    }
}
