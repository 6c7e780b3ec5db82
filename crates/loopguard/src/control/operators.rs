//! `loopguard operator init`.

use super::*;

/// `operator init --name NAME [--by OPERATOR]`: the first operator, or another one added by an
/// existing operator.
pub fn operator_init(t: &Target, name: &str, by: Option<&str>, secrets: &mut Secrets) -> Result<String, String> {
    if name.is_empty() || name.len() > 64 || !name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
        return Err("operator names are 1-64 letters, digits, `-`, `_` or `.`".into());
    }
    let mut store = t.store()?;
    let count = store.read(|tx| tx.operator_count())?;
    let created_by = match (count, by) {
        (0, _) => "init".to_string(),
        (_, None) => return Err("operators exist already: an existing operator adds another with --by NAME".into()),
        (_, Some(b)) => {
            operator::authenticate(&mut store, &[b.to_string()], secrets, &format!("add operator {name}"))?;
            b.to_string()
        }
    };
    let pass = secrets.get(name, "new passphrase")?;
    if matches!(secrets, Secrets::Terminal) {
        let again = secrets.get(name, "the new passphrase again")?;
        if again != pass {
            return Err("the passphrases differ".into());
        }
    }
    let phc = operator::hash(&pass)?;
    store.write(|tx| tx.add_operator(name, &phc, now(), &created_by))?;
    let mut e = NewEvent::new("", EventKind::OperatorAdded);
    e.details = Some(json!({ "operator": name, "by": created_by, "actor": actor() }));
    let _ = t.log().append(e);
    Ok(format!("operator `{name}` added\n"))
}
