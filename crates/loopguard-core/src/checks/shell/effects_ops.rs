//! What needs computation rather than a shape: loopguard's own human-only commands, SQL handed to
//! database clients, disk formatting, taking the machine down and `kill -1`. Everything that is a
//! shape — forges, publishing, cloud CLIs, Kubernetes, containers, services, firewalls — is in the
//! packs (`crates/loopguard-core/packs/`, `crate::packs`).

use super::effects_types::Effects;
use super::unwrap::Command;
use crate::reasons::*;
use crate::{AutonomyLevel, RiskLevel};

fn words(c: &Command) -> Vec<&str> {
    c.args.iter().map(|w| w.text.as_str()).collect()
}

/// The first two non-option words (`gh pr merge` → ["pr", "merge"]).
fn subcommands<'a>(w: &[&'a str]) -> (Option<&'a str>, Option<&'a str>) {
    let mut it = w.iter().filter(|a| !a.starts_with('-')).copied();
    (it.next(), it.next())
}

/// Effects of the remaining known programs.
/// What only a human may do with loopguard: the agent must not lift its own limits.
fn loopguard_human_only(w: &[&str], s1: Option<&str>, s2: Option<&str>) -> bool {
    matches!(
        s1,
        Some(
            "reset"
                | "break-glass"
                | "yolo"
                | "approve"
                | "certify"
                | "grant"
                | "operator"
                | "install"
                | "uninstall"
                // The human's controls, served to a browser: an agent's own dashboard would be
                // a passphrase oracle and a reader of every journal.
                | "dashboard"
                // The fleet's positions and database are the operators'.
                | "fleet"
        )
    ) || (s1 == Some("breaker") && matches!(s2, Some("reset" | "trip")))
        || (s1 == Some("hold") && matches!(s2, Some("release")))
        // Signing and replacing the data the gate trusts.
        || (s1 == Some("audit") && matches!(s2, Some("checkpoint")))
        || (s1 == Some("advisories") && matches!(s2, Some("import")))
        // Walking steps back writes over the workspace from outside the sandbox, and `--force`
        // over the human's own later changes; listing them is harmless.
        || (s1 == Some("undo") && !w.contains(&"--list"))
        // A preview of tool calls given as JSON: the calls inside are not analysed here.
        || (s1 == Some("preview") && !w.contains(&"--command"))
}

pub fn ops(c: &Command, e: &mut Effects) {
    let w = words(c);
    let (s1, s2) = subcommands(&w);
    let p = c.program.as_str();
    match p {
        // `loopguard-console` serves loopguard's own dashboard and fleet commands.
        "loopguard" | "loopguard-console" => {
            let human_only = loopguard_human_only(&w, s1, s2);
            if human_only {
                e.op(SELF_PROTECTION, RiskLevel::Critical, format!("`loopguard {}` is for humans only.", w.join(" ")));
            } else {
                e.level = AutonomyLevel::Observe;
            }
        }
        _ if is_db_client(p) => db(c, &w, e),
        _ if p.starts_with("mkfs")
            || matches!(
                p,
                "mke2fs"
                    | "mkswap"
                    | "wipefs"
                    | "fdisk"
                    | "sfdisk"
                    | "cfdisk"
                    | "parted"
                    | "sgdisk"
                    | "gdisk"
                    | "blkdiscard"
            )
            || (p == "cryptsetup" && s1 == Some("luksFormat")) =>
        {
            e.op(DESTRUCTIVE_DISK_FORMAT, RiskLevel::Critical, format!("`{p}` formats or repartitions a disk."));
        }
        "shutdown" | "reboot" | "halt" | "poweroff" => {
            e.op(DESTRUCTIVE_SHUTDOWN, RiskLevel::Critical, format!("`{p}` takes the machine down."))
        }
        "init" | "telinit" if matches!(s1, Some("0" | "6")) => e.op(
            DESTRUCTIVE_SHUTDOWN,
            RiskLevel::Critical,
            format!("`{p} {}` takes the machine down.", s1.unwrap_or("")),
        ),
        "pkill" | "killall" if w.iter().any(|a| a.contains("loopguard")) => e.op(
            SELF_PROTECTION,
            RiskLevel::Critical,
            format!("`{p}` of loopguard's own processes (its fleet agent, its dashboard) is for humans only."),
        ),
        "kill" => {
            // `kill -9 -1`, `kill -s KILL -1`, `kill -- -1`: every process the user can reach.
            let mut rest: &[&str] = &w;
            if let Some((first, tail)) = rest.split_first() {
                if *first == "-s" || *first == "-n" {
                    rest = tail.get(1..).unwrap_or_default();
                } else if first.starts_with('-') && *first != "-1" && *first != "--" {
                    rest = tail;
                }
            }
            if rest.contains(&"-1") {
                e.op(DESTRUCTIVE_KILL_ALL, RiskLevel::Critical, "`kill … -1` signals every process you own.");
            }
        }
        "killall5" => e.op(DESTRUCTIVE_KILL_ALL, RiskLevel::Critical, "`killall5` signals every process."),
        _ => {}
    }
}

/// SQL handed to a database client: on the command line, in a heredoc or here-string.
fn db(c: &Command, w: &[&str], e: &mut Effects) {
    let p = c.program.as_str();
    let flag_value = |names: &[&str]| {
        w.iter().enumerate().find_map(|(i, a)| {
            if names.contains(a) {
                w.get(i + 1).map(|s| s.to_string())
            } else {
                names.iter().find_map(|n| a.strip_prefix(&format!("{n}=")).map(String::from))
            }
        })
    };
    // Only the version, the help or (psql) the list of databases: reads.
    if matches!(w, [one] if matches!(*one, "--version" | "-V" | "--help" | "-?" | "-h" | "-version" | "-help"))
        || (p == "psql"
            && w.iter().any(|a| matches!(*a, "-l" | "--list"))
            && !w.iter().any(|a| matches!(*a, "-c" | "--command" | "-f" | "--file")))
    {
        e.level = AutonomyLevel::Observe;
        return;
    }
    let mut sql = flag_value(&["-c", "--command", "-e", "--execute", "--eval", "-Q", "-q", "--query"]);
    if sql.is_none() && p == "sqlite3" {
        sql = w.iter().filter(|a| !a.starts_with('-')).nth(1).map(|s| s.to_string());
    }
    // SQL fed on stdin: a heredoc or here-string, or the literal output of `echo`/`printf`
    // piped in (`echo 'DROP DATABASE app;' | psql`).
    let sql =
        sql.or_else(|| c.stdin_text.clone()).or_else(|| c.stdin_from.first().and_then(super::opaque::literal_text));
    let Some(sql) = sql else {
        // Interactive or from a file (the analysis reads a file it can: `sql_file`): anything
        // can happen.
        e.level = AutonomyLevel::Operate;
        return;
    };
    sql_text(p, &sql, e);
}

/// The file a database client reads its SQL from: `-f FILE`, `--file=FILE`, `-i FILE`
/// (`mongosh`, `sqlcmd`), `.read FILE` is in the SQL itself; `< FILE` is the caller's.
pub fn sql_file(c: &Command) -> Option<&str> {
    let w = words(c);
    w.iter().enumerate().find_map(|(i, a)| match *a {
        "-f" | "--file" | "-i" | "--input-file" => w.get(i + 1).copied(),
        _ => a.strip_prefix("--file=").or_else(|| a.strip_prefix("--input-file=")),
    })
}

/// Whether a program is a database client whose SQL `db` judges.
pub fn is_db_client(p: &str) -> bool {
    matches!(
        p,
        "psql"
            | "mysql"
            | "mariadb"
            | "sqlite3"
            | "sqlcmd"
            | "mongosh"
            | "mongo"
            | "cqlsh"
            | "clickhouse-client"
            | "duckdb"
    )
}

/// SQL (or a Mongo script) a client runs: what it drops, deletes or changes.
pub fn sql_text(p: &str, sql: &str, e: &mut Effects) {
    let u = sql.to_ascii_uppercase();
    // Functions and dot-commands that reach files, native code or a shell from inside the SQL.
    let lower = sql.to_ascii_lowercase();
    if let Some(f) = ["readfile(", "writefile(", "read_text(", "read_blob(", "load_extension(", "edit("]
        .iter()
        .find(|f| lower.contains(*f))
        .or_else(|| {
            [".shell", ".system", ".output", ".once", ".load", ".read", ".import"]
                .iter()
                .find(|d| lower.lines().any(|l| l.trim_start().starts_with(*d)))
        })
    {
        e.op(
            SHELL_HIDDEN_CODE,
            RiskLevel::High,
            format!(
                "`{p}` SQL uses `{}`, which reaches files, native code or a shell from the database.",
                f.trim_end_matches('(')
            ),
        );
    }
    let words: Vec<&str> = u
        .split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '.' || ch == '(' || ch == ')'))
        .filter(|s| !s.is_empty())
        .collect();
    let follows = |a: &str, b: &[&str]| words.windows(2).any(|p| p[0] == a && b.contains(&p[1]));
    let drop =
        follows("DROP", &["TABLE", "DATABASE", "SCHEMA", "INDEX", "VIEW", "COLLECTION", "USER", "ROLE", "KEYSPACE"])
            || words.contains(&"TRUNCATE");
    let delete_all = u.split(';').any(|stmt| {
        let s = stmt.trim_start();
        (s.starts_with("DELETE") && !s.contains("WHERE")) || (s.starts_with("UPDATE") && !s.contains("WHERE"))
    });
    let mongo_drop = u.contains("DROPDATABASE()") || u.contains(".DROP()") || u.contains("DELETEMANY({})");
    if drop || delete_all || mongo_drop {
        e.level = AutonomyLevel::Operate;
        e.op(
            DESTRUCTIVE_DB,
            RiskLevel::Critical,
            format!("`{p}` runs SQL that drops, truncates or deletes every row."),
        );
    } else if words.iter().any(|k| {
        matches!(
            *k,
            "INSERT"
                | "UPDATE"
                | "DELETE"
                | "ALTER"
                | "CREATE"
                | "GRANT"
                | "REVOKE"
                | "REPLACE"
                | "MERGE"
                | "COPY"
                | "VACUUM"
        )
    }) {
        e.level = AutonomyLevel::Operate;
    } else {
        e.level = AutonomyLevel::Observe;
    }
}
