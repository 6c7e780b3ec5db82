use super::*;

pub fn run(env: &Env, args: PreviewArgs) -> Result<ExitCode, String> {
    let PreviewArgs { command, call, json, timeout_ms } = args;
    let workspace = env.workspace_for(&cwd()?);
    let ctx = loopguard::preview::Ctx {
        workspace: &workspace,
        home: env.home.as_deref(),
        timeout: std::time::Duration::from_millis(timeout_ms),
    };
    // `--call` takes Claude Code's tool-call JSON (`tool_name`, `tool_input`).
    let calls: Vec<(String, serde_json::Value)> = match (command, call) {
        (Some(c), None) => vec![("Bash".into(), serde_json::json!({ "command": c }))],
        (None, Some(c)) => {
            let text = if c == "-" {
                let mut s = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut s).map_err(|e| e.to_string())?;
                s
            } else {
                c
            };
            text.lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| {
                    let v: serde_json::Value =
                        serde_json::from_str(l).map_err(|e| format!("not a JSON tool call: {e}"))?;
                    let tool = v.get("tool_name").or_else(|| v.get("tool")).and_then(|t| t.as_str());
                    let input = v.get("tool_input").or_else(|| v.get("input"));
                    match (tool, input) {
                        (Some(t), Some(i)) => Ok((t.to_string(), i.clone())),
                        _ => Err("a tool call needs `tool_name` and `tool_input`".to_string()),
                    }
                })
                .collect::<Result<_, String>>()?
        }
        _ => return Err("name what to preview: --command CMD or --call JSON (or --call - for stdin)".into()),
    };
    let calls: Vec<(String, loopguard_core::Action)> =
        calls.into_iter().map(|(t, i)| (t.clone(), loopguard::hosts::claude_code::tools::action(&t, &i))).collect();
    let results = loopguard::preview::preview_batch(&calls, &ctx);
    if json {
        let v: Vec<serde_json::Value> = results
            .iter()
            .map(|r| match r {
                Ok(p) => serde_json::to_value(p).unwrap_or_default(),
                Err(e) => serde_json::json!({ "error": e }),
            })
            .collect();
        let v = if v.len() == 1 { v[0].clone() } else { serde_json::Value::Array(v) };
        println!("{v:#}");
    } else {
        let color = std::io::IsTerminal::is_terminal(&std::io::stdout());
        let text = if results.len() == 1 {
            match &results[0] {
                Ok(p) => loopguard::preview::display_preview(p, color),
                Err(e) => return Err(e.clone()),
            }
        } else {
            loopguard::preview::display_batch_preview(&results, color)
        };
        loopguard::preview::page(&text, color);
    }
    Ok(if results.iter().all(Result::is_ok) { ExitCode::SUCCESS } else { ExitCode::from(2) })
}
