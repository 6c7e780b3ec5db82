//! Forges, releases, infrastructure, databases and the machine itself: what needs `merge`,
//! `release` or `operate`, and what destroys.

use super::effects::Effects;
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
pub fn ops(c: &Command, e: &mut Effects) {
    let w = words(c);
    let (s1, s2) = subcommands(&w);
    let p = c.program.as_str();
    let level = |e: &mut Effects, l: AutonomyLevel| e.level = e.level.max(l);
    match p {
        "gh" | "glab" | "hub" => match (s1, s2) {
            (Some("repo"), Some("delete" | "archive")) | (Some("release"), Some("delete")) => {
                e.op(
                    DESTRUCTIVE_FORGE_DELETE,
                    RiskLevel::Critical,
                    format!("`{p} {} {}` deletes from the forge.", s1.unwrap_or(""), s2.unwrap_or("")),
                );
            }
            (Some("pr" | "mr"), Some("merge")) => level(e, AutonomyLevel::Merge),
            (Some("release"), Some("create" | "upload" | "edit")) => level(e, AutonomyLevel::Release),
            (Some("pr" | "mr"), Some("create")) | (Some("repo"), Some("create" | "fork")) => {
                level(e, AutonomyLevel::Pr)
            }
            (Some("api"), _) => {
                let method = w
                    .iter()
                    .position(|a| *a == "-X" || *a == "--method")
                    .and_then(|i| w.get(i + 1))
                    .map(|m| m.to_ascii_uppercase());
                if w.iter().any(|a| a.ends_with("/merge")) {
                    level(e, AutonomyLevel::Merge);
                } else if method.as_deref() == Some("DELETE") {
                    e.op(
                        DESTRUCTIVE_FORGE_DELETE,
                        RiskLevel::High,
                        "`gh api -X DELETE` deletes something on the forge.",
                    );
                } else if matches!(method.as_deref(), Some("POST" | "PUT" | "PATCH")) {
                    level(e, AutonomyLevel::Pr);
                } else {
                    e.level = AutonomyLevel::Observe;
                }
            }
            (_, Some("list" | "view" | "status" | "diff" | "checks")) | (Some("auth" | "search" | "browse"), _) => {
                e.level = AutonomyLevel::Observe
            }
            _ => {}
        },
        "npm" | "pnpm" | "yarn" | "bun" => match s1 {
            Some("publish") => level(e, AutonomyLevel::Release),
            Some("npm") if s2 == Some("publish") => level(e, AutonomyLevel::Release),
            Some("unpublish") => {
                level(e, AutonomyLevel::Release);
                e.op(
                    DESTRUCTIVE_FORGE_DELETE,
                    RiskLevel::Critical,
                    format!("`{p} unpublish` removes a published package."),
                );
            }
            Some("dist-tag" | "deprecate" | "owner" | "access" | "token") => level(e, AutonomyLevel::Release),
            Some(
                "ls" | "list" | "view" | "info" | "outdated" | "why" | "explain" | "audit" | "search" | "help"
                | "config",
            ) => e.level = AutonomyLevel::Observe,
            _ => {}
        },
        "cargo" => match s1 {
            Some("publish" | "yank" | "owner") => level(e, AutonomyLevel::Release),
            Some(
                "tree" | "metadata" | "search" | "version" | "--version" | "verify-project" | "pkgid"
                | "locate-project",
            ) => e.level = AutonomyLevel::Observe,
            _ => {}
        },
        "twine" | "flit" | "hatch" | "poetry" | "gem" | "mvn" | "gradle" | "gradlew" | "dotnet" | "uv" => {
            let publishes = matches!(
                (p, s1, s2),
                ("twine", Some("upload"), _)
                    | ("flit" | "hatch" | "poetry" | "uv", Some("publish"), _)
                    | ("gem", Some("push" | "yank"), _)
                    | ("mvn", Some("deploy"), _)
                    | ("gradle" | "gradlew", Some("publish"), _)
                    | ("dotnet", Some("nuget"), Some("push"))
            ) || (matches!(p, "mvn") && w.contains(&"deploy"))
                || (matches!(p, "gradle" | "gradlew") && w.iter().any(|a| a.starts_with("publish")));
            if publishes {
                level(e, AutonomyLevel::Release);
            }
        }
        "docker" | "podman" | "nerdctl" => match (s1, s2) {
            (Some("push"), _)
            | (Some("image"), Some("push"))
            | (Some("manifest"), Some("push"))
            | (Some("buildx"), _)
                if w.contains(&"push") || w.contains(&"--push") =>
            {
                level(e, AutonomyLevel::Release)
            }
            (Some("system" | "image" | "volume" | "container" | "network" | "builder"), Some("prune")) => {
                let risk = if w.iter().any(|a| *a == "--volumes" || *a == "-a" || *a == "--all") {
                    RiskLevel::Critical
                } else {
                    RiskLevel::High
                };
                e.op(
                    DESTRUCTIVE_INFRA,
                    risk,
                    format!(
                        "`{p} {} prune` deletes {} data.",
                        s1.unwrap_or(""),
                        if risk == RiskLevel::Critical { "volumes and images" } else { "unused" }
                    ),
                );
            }
            (Some("volume"), Some("rm")) => {
                e.op(DESTRUCTIVE_INFRA, RiskLevel::Critical, "`docker volume rm` deletes the data in a volume.")
            }
            (Some("ps" | "images" | "inspect" | "logs" | "version" | "info" | "stats" | "top" | "history"), _) => {
                e.level = AutonomyLevel::Observe
            }
            _ => {}
        },
        "terraform" | "tofu" | "terragrunt" | "pulumi" | "cdk" | "serverless" | "sls" => {
            let destroy = s1 == Some("destroy") || w.contains(&"-destroy") || (p == "pulumi" && s1 == Some("destroy"));
            if destroy {
                level(e, AutonomyLevel::Operate);
                e.op(DESTRUCTIVE_INFRA, RiskLevel::Critical, format!("`{p} destroy` tears down real infrastructure."));
            } else if matches!(
                s1,
                Some(
                    "apply"
                        | "up"
                        | "deploy"
                        | "import"
                        | "taint"
                        | "untaint"
                        | "state"
                        | "refresh"
                        | "force-unlock"
                        | "remove"
                )
            ) {
                level(e, AutonomyLevel::Operate);
            } else if matches!(
                s1,
                Some(
                    "plan"
                        | "validate"
                        | "fmt"
                        | "show"
                        | "output"
                        | "graph"
                        | "providers"
                        | "version"
                        | "preview"
                        | "diff"
                        | "synth"
                        | "ls"
                )
            ) {
                e.level = AutonomyLevel::Observe;
            }
        }
        "kubectl" | "oc" | "k9s" => match s1 {
            Some("delete") => {
                level(e, AutonomyLevel::Operate);
                e.op(DESTRUCTIVE_INFRA, RiskLevel::Critical, "`kubectl delete` removes live cluster resources.");
            }
            Some("drain") => {
                level(e, AutonomyLevel::Operate);
                e.op(DESTRUCTIVE_INFRA, RiskLevel::High, "`kubectl drain` evicts every pod from a node.");
            }
            Some(
                "get" | "describe" | "logs" | "top" | "explain" | "version" | "api-resources" | "api-versions"
                | "cluster-info" | "auth" | "diff" | "events",
            ) => e.level = AutonomyLevel::Observe,
            Some("config") if matches!(s2, Some("view" | "get-contexts" | "current-context")) => {
                e.level = AutonomyLevel::Observe
            }
            _ => level(e, AutonomyLevel::Operate),
        },
        "helm" => match s1 {
            Some("uninstall" | "delete" | "del") => {
                level(e, AutonomyLevel::Operate);
                e.op(DESTRUCTIVE_INFRA, RiskLevel::High, "`helm uninstall` removes a release from the cluster.");
            }
            Some("install" | "upgrade" | "rollback") => level(e, AutonomyLevel::Operate),
            Some(
                "list" | "ls" | "status" | "template" | "lint" | "show" | "get" | "history" | "search" | "version"
                | "env",
            ) => e.level = AutonomyLevel::Observe,
            _ => {}
        },
        "aws" | "gcloud" | "az" | "doctl" | "flyctl" | "fly" | "heroku" | "vercel" | "netlify" | "wrangler"
        | "firebase" => cloud(c, &w, e),
        "loopguard" => {
            // What only a human may do: the agent must not lift its own limits.
            let human_only = matches!(
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
                )
            ) || (s1 == Some("breaker") && matches!(s2, Some("reset" | "trip")))
                || (s1 == Some("hold") && matches!(s2, Some("release")))
                // Signing and replacing the data the gate trusts.
                || (s1 == Some("audit") && matches!(s2, Some("checkpoint")))
                || (s1 == Some("advisories") && matches!(s2, Some("import")))
                // A preview of tool calls given as JSON: the calls inside are not analysed here.
                || (s1 == Some("preview") && !w.contains(&"--command"));
            if human_only {
                e.op(SELF_PROTECTION, RiskLevel::Critical, format!("`loopguard {}` is for humans only.", w.join(" ")));
            } else {
                e.level = AutonomyLevel::Observe;
            }
        }
        "ansible" | "ansible-playbook" | "salt" | "chef-client" | "puppet" => level(e, AutonomyLevel::Operate),
        "systemctl" | "service" | "launchctl" => {
            let verb = if p == "service" { s2 } else { s1 };
            match verb {
                Some("poweroff" | "reboot" | "halt" | "kexec" | "suspend" | "hibernate") => e.op(
                    DESTRUCTIVE_SHUTDOWN,
                    RiskLevel::Critical,
                    format!("`{p} {}` takes the machine down.", verb.unwrap_or("")),
                ),
                Some(
                    "status" | "list-units" | "list-unit-files" | "is-active" | "is-enabled" | "show" | "cat"
                    | "list-timers",
                ) => e.level = AutonomyLevel::Observe,
                _ => level(e, AutonomyLevel::Operate),
            }
        }
        _ if is_db_client(p) => db(c, &w, e),
        "redis-cli" | "valkey-cli" | "keydb-cli" => {
            let upper: Vec<String> = w.iter().map(|a| a.to_ascii_uppercase()).collect();
            let stdin = c.stdin_text.as_deref().unwrap_or("").to_ascii_uppercase();
            if upper.iter().any(|a| a == "FLUSHALL" || a == "FLUSHDB")
                || stdin.contains("FLUSHALL")
                || stdin.contains("FLUSHDB")
            {
                e.op(DESTRUCTIVE_DB, RiskLevel::Critical, format!("`{p} FLUSHALL/FLUSHDB` deletes every key."));
                level(e, AutonomyLevel::Operate);
            } else if upper.iter().any(|a| {
                matches!(
                    a.as_str(),
                    "GET"
                        | "KEYS"
                        | "SCAN"
                        | "INFO"
                        | "PING"
                        | "TTL"
                        | "TYPE"
                        | "HGETALL"
                        | "LRANGE"
                        | "SMEMBERS"
                        | "MONITOR"
                        | "DBSIZE"
                )
            }) {
                e.level = AutonomyLevel::Observe;
            } else {
                level(e, AutonomyLevel::Operate);
            }
        }
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
        "crontab" => {
            if w.iter().any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('r')) {
                e.op(
                    DESTRUCTIVE_CRONTAB_REMOVE,
                    RiskLevel::Critical,
                    "`crontab -r` deletes every scheduled job without confirmation.",
                );
            } else if w.contains(&"-l") {
                e.level = AutonomyLevel::Observe;
            }
        }
        "iptables" | "ip6tables" | "iptables-legacy" | "nft" | "ufw" | "firewall-cmd" => {
            let flush = w.iter().any(|a| matches!(*a, "-F" | "--flush" | "-X" | "--delete-chain"))
                || (p == "nft" && w.contains(&"flush"))
                || (p == "ufw" && matches!(s1, Some("disable" | "reset")))
                || (p == "firewall-cmd" && w.contains(&"--panic-off"));
            if flush {
                e.op(
                    DESTRUCTIVE_FIREWALL_FLUSH,
                    RiskLevel::Critical,
                    format!("`{p}` flushes or disables the firewall."),
                );
            }
            level(e, AutonomyLevel::Operate);
        }
        _ => {}
    }
}

fn cloud(c: &Command, w: &[&str], e: &mut Effects) {
    let p = c.program.as_str();
    let has = |x: &str| w.contains(&x);
    let any_delete = w.iter().any(|a| {
        a.starts_with("delete")
            || a.starts_with("terminate")
            || a.starts_with("destroy")
            || *a == "rb"
            || *a == "rm"
            || *a == "remove"
            || *a == "purge"
    });
    let reads = w.iter().any(|a| {
        a.starts_with("describe")
            || a.starts_with("list")
            || a.starts_with("get")
            || *a == "ls"
            || *a == "show"
            || *a == "whoami"
            || *a == "logs"
    });
    if (p == "aws" && has("s3") && has("rm") && has("--recursive"))
        || (p == "aws" && has("rb") && has("--force"))
        || (p == "gsutil" && has("rm") && has("-r"))
    {
        e.level = AutonomyLevel::Operate;
        e.op(DESTRUCTIVE_INFRA, RiskLevel::Critical, format!("`{p}` deletes a bucket or everything under a prefix."));
    } else if any_delete {
        e.level = AutonomyLevel::Operate;
        e.op(DESTRUCTIVE_INFRA, RiskLevel::Critical, format!("`{p} … delete/terminate` destroys cloud resources."));
    } else if reads {
        e.level = AutonomyLevel::Observe;
    } else {
        e.level = AutonomyLevel::Operate;
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
    let mut sql = flag_value(&["-c", "--command", "-e", "--execute", "--eval", "-Q", "-q"]);
    if sql.is_none() && p == "sqlite3" {
        sql = w.iter().filter(|a| !a.starts_with('-')).nth(1).map(|s| s.to_string());
    }
    let sql = sql.or_else(|| c.stdin_text.clone());
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
