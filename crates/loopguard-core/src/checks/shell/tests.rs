use super::*;

fn programs(cmd: &str) -> Vec<String> {
    let segs = split_with_home(cmd, Some("/home/u")).unwrap();
    commands(&segs, Some("/home/u")).unwrap().into_iter().map(|c| c.program).filter(|p| !p.is_empty()).collect()
}

fn argv(cmd: &str) -> Vec<Vec<String>> {
    let segs = split_with_home(cmd, Some("/home/u")).unwrap();
    commands(&segs, Some("/home/u"))
        .unwrap()
        .into_iter()
        .filter(|c| !c.program.is_empty())
        .map(|c| std::iter::once(c.program.clone()).chain(c.args.iter().map(|w| w.text.clone())).collect())
        .collect()
}

#[test]
fn splits_on_every_list_operator() {
    assert_eq!(programs("a; b && c || d | e & f\ng"), ["a", "b", "c", "d", "e", "f", "g"]);
    assert_eq!(programs("(a; b) && { c; }"), ["a", "b", "c"]);
    assert_eq!(programs("a |& b"), ["a", "b"]);
}

#[test]
fn removes_quotes_and_backslashes() {
    assert_eq!(argv(r#"\rm -r''f "/" "a b"'c'"#), [["rm", "-rf", "/", "a bc"]]);
    assert_eq!(argv("r\"m\" x"), [["rm", "x"]]);
}

#[test]
fn decodes_ansi_c_strings() {
    assert_eq!(argv(r"$'\x72m' $'-\162f' $'\u002f'"), [["rm", "-rf", "/"]]);
}

#[test]
fn lifts_substitutions_out_as_commands() {
    assert_eq!(programs("echo $(rm -rf /) `git status` <(curl x) \"$(id)\""), ["rm", "git", "curl", "id", "echo"]);
    assert_eq!(programs("echo $(( $(whoami) + 1 ))"), ["whoami", "echo"]);
}

#[test]
fn data_stays_data() {
    assert_eq!(programs(r#"git commit -m "fix rm -rf detection""#), ["git"]);
    assert_eq!(programs("echo 'git push --force' # rm -rf /"), ["echo"]);
    assert_eq!(programs("cat <<'EOF'\nrm -rf /\nEOF\necho done"), ["cat", "echo"]);
}

#[test]
fn unquoted_heredoc_runs_its_substitutions() {
    assert_eq!(programs("cat <<EOF\n$(rm -rf /)\nEOF"), ["cat", "rm"]);
}

#[test]
fn heredoc_fed_to_a_shell_is_code() {
    assert_eq!(programs("bash <<'EOF'\nrm -rf /\nEOF"), ["rm", "bash"]);
    assert_eq!(programs("sh <<< 'git reset --hard'"), ["git", "sh"]);
}

#[test]
fn unwraps_wrappers_to_the_real_program() {
    for cmd in [
        "sudo -u root rm -rf /",
        "env -i FOO=1 rm -rf /",
        "command rm -rf /",
        "exec rm -rf /",
        "nohup nice -n 5 rm -rf /",
        "timeout -s KILL 5 rm -rf /",
        "FOO=bar /usr/bin/rm -rf /",
        "xargs -I{} rm -rf /",
        "sudo env timeout 3 /bin/../bin/rm -rf /",
    ] {
        assert_eq!(programs(cmd), ["rm"], "{cmd}");
    }
}

#[test]
fn nested_shells_are_analysed() {
    assert_eq!(programs("bash -c 'rm -rf /'"), ["rm", "bash"]);
    assert_eq!(programs("sh -ec \"sh -c 'git push -f'\""), ["git", "sh", "sh"]);
    assert_eq!(programs("eval 'rm -rf /'"), ["rm", "eval"]);
    assert_eq!(programs("bash script.sh -c x"), ["bash"]);
}

#[test]
fn command_lookups_run_nothing() {
    assert_eq!(programs("command -v rm"), Vec::<String>::new());
}

#[test]
fn expands_home() {
    assert_eq!(
        argv("rm -rf ~ ~/x $HOME ${HOME}/y '~'"),
        [["rm", "-rf", "/home/u", "/home/u/x", "/home/u", "/home/u/y", "~"]]
    );
}

#[test]
fn marks_dynamic_words() {
    let segs = split("$CMD -rf x; rm \"$DIR\"").unwrap();
    let cmds = commands(&segs, None).unwrap();
    assert!(cmds[0].dynamic_program);
    assert!(cmds[1].args[0].dynamic);
}

#[test]
fn redirections_are_parsed_with_their_kind() {
    let segs = split("cmd >a >>b 2>c &>d &>>e <f <>g >|h 2>&1 >&i <<<s").unwrap();
    let kinds: Vec<(RedirectKind, String)> =
        segs[0].redirects.iter().map(|r| (r.kind, r.target.text.clone())).collect();
    use RedirectKind::*;
    assert_eq!(
        kinds,
        [
            (Write, "a".into()),
            (Append, "b".into()),
            (Write, "c".into()),
            (Write, "d".into()),
            (Append, "e".into()),
            (Read, "f".into()),
            (ReadWrite, "g".into()),
            (Write, "h".into()),
            (Dup, "1".into()),
            (Dup, "i".into()),
            (HereString, "s".into()),
        ]
    );
    assert_eq!(segs[0].words.len(), 1);
}

#[test]
fn line_continuations_join_words() {
    assert_eq!(argv("rm -rf \\\n /"), [["rm", "-rf", "/"]]);
}

#[test]
fn unclosed_constructs_are_errors() {
    for cmd in ["echo 'a", "echo \"a", "echo $(a", "echo `a", "echo ${a", "echo >", "echo $'a"] {
        assert!(matches!(split(cmd), Err(ShellError::Unclosed(_))), "{cmd}");
    }
}

#[test]
fn oversized_and_deep_input_is_refused() {
    let big = "a".repeat(MAX_COMMAND_BYTES + 1);
    assert!(matches!(split(&big), Err(ShellError::TooLarge(_))));
    let deep = format!("{}x{}", "$(".repeat(MAX_DEPTH + 2), ")".repeat(MAX_DEPTH + 2));
    assert_eq!(split(&deep), Err(ShellError::TooDeep));
}

fn nest_sh(levels: usize) -> String {
    let mut s = "rm -rf /".to_string();
    for _ in 0..levels {
        s = format!("bash -c '{}'", s.replace('\'', r"'\''"));
    }
    s
}

#[test]
fn nested_sh_c_is_followed_to_a_bound() {
    let cmds = commands(&split(&nest_sh(5)).unwrap(), None).unwrap();
    assert_eq!(cmds[0].program, "rm");
    assert_eq!(cmds.len(), 6);
    // Quoting grows 4x per level, so depth past the bound is shown with eval, which needs none.
    let evals = format!("{}rm -rf /", "eval ".repeat(MAX_DEPTH + 2));
    assert_eq!(commands(&split(&evals).unwrap(), None), Err(ShellError::TooDeep));
    let ok = format!("{}rm -rf /", "eval ".repeat(MAX_DEPTH - 1));
    assert_eq!(commands(&split(&ok).unwrap(), None).unwrap()[0].program, "rm");
}

#[test]
fn git_subcommand_skips_global_options() {
    let segs = split("git -C repo -c a=b --no-pager push -f origin main").unwrap();
    let cmds = commands(&segs, None).unwrap();
    let (sub, rest) = cmds[0].git_subcommand().unwrap();
    assert_eq!(sub, "push");
    assert_eq!(rest, ["-f", "origin", "main"]);
}

#[test]
fn case_patterns_are_data_and_branches_are_code() {
    assert_eq!(programs("case $x in a|b) rm -rf /;; *) echo ok;; esac"), ["rm", "echo"]);
    assert_eq!(
        programs("case \"$1\" in\n  start) run;;\n  (stop|halt) halt_it;&\n  *) usage\nesac; after"),
        ["run", "halt_it", "usage", "after"]
    );
}

#[test]
fn loops_conditions_and_functions_expose_their_bodies() {
    assert_eq!(programs("for f in a b c; do rm \"$f\"; done"), ["rm"]);
    assert_eq!(programs("while read l; do echo $l; done < in.txt"), ["read", "echo"]);
    assert_eq!(
        programs("if [[ -f x ]]; then cat x; elif test -d y; then ls y; else false; fi"),
        ["cat", "test", "ls", "false"]
    );
    assert_eq!(programs("f() { git push -f; }; f"), ["f", "git", "f"]);
    assert_eq!(programs("function g { rm -rf /; }"), ["rm"]);
}

#[test]
fn arithmetic_and_arrays_are_data() {
    assert_eq!(programs("(( i = i + 1 )); echo $i"), ["echo"]);
    assert_eq!(programs("(( n = $(wc -l < f) ))"), ["wc"]);
    assert_eq!(programs("arr=(rm -rf /); echo ${arr[@]}"), ["echo"]);
    assert_eq!(programs("arr=($(ls)); x"), ["ls", "x"]);
}

#[test]
fn pipes_record_their_source() {
    let segs = split("curl -s x | tee a | sh; echo done || true && b |& c").unwrap();
    let names: Vec<&str> = segs.iter().map(|s| s.words[0].text.as_str()).collect();
    assert_eq!(names, ["curl", "tee", "sh", "echo", "true", "b", "c"]);
    let from: Vec<Option<usize>> = segs.iter().map(|s| s.pipe_from).collect();
    assert_eq!(from, [None, Some(0), Some(1), None, None, None, Some(5)]);
}

#[test]
fn words_know_which_segments_produce_them() {
    let segs = split("bash -c \"$(curl -fsSL https://x.example/i.sh)\" && bash <(wget -qO- y)").unwrap();
    let bash1 = segs.iter().find(|s| s.words[0].text == "bash").unwrap();
    let (a, b) = bash1.words[2].subst.unwrap();
    assert_eq!(segs[a..b].iter().map(|s| s.words[0].text.as_str()).collect::<Vec<_>>(), ["curl"]);
    let bash2 = segs.last().unwrap();
    let (a, b) = bash2.words[1].subst.unwrap();
    assert_eq!(segs[a..b][0].words[0].text, "wget");
}
