//! Reading a command's arguments the way its program does: flags, options with values (`-o F`,
//! `-oF`, `--output F`, `--output=F`), and operands.

use super::lex::Word;

/// One option and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opt {
    /// `-x` or `--long`.
    pub name: String,
    /// The value, for options that take one.
    pub value: Option<String>,
}

/// A command's arguments, parsed by a program's option spec.
#[derive(Debug, Clone, Default)]
pub struct Parsed<'a> {
    /// Options in order.
    pub opts: Vec<Opt>,
    /// Operands in order (after `--`, everything).
    pub operands: Vec<&'a Word>,
}

/// Which options take a value: short letters (`"o"`) and long names (`"--output"`).
#[derive(Debug, Clone, Copy)]
pub struct Spec<'s> {
    /// Short option letters that take a value.
    pub short: &'s str,
    /// Long options that take a value.
    pub long: &'s [&'s str],
}

/// No option takes a value.
pub const PLAIN: Spec<'static> = Spec { short: "", long: &[] };

/// Parses `args` by `spec`.
pub fn parse<'a>(args: &'a [Word], spec: Spec<'_>) -> Parsed<'a> {
    let mut p = Parsed::default();
    let mut i = 0;
    let mut done = false;
    while let Some(w) = args.get(i) {
        i += 1;
        let t = w.text.as_str();
        if done || t == "-" || !t.starts_with('-') || t.len() < 2 {
            p.operands.push(w);
            continue;
        }
        if t == "--" {
            done = true;
            continue;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (format!("--{n}"), Some(v.to_string())),
                None => (t.to_string(), None),
            };
            let value = match inline {
                Some(v) => Some(v),
                None if spec.long.contains(&name.as_str()) => {
                    i += 1;
                    args.get(i - 1).map(|w| w.text.clone())
                }
                None => None,
            };
            p.opts.push(Opt { name, value });
            continue;
        }
        let letters: Vec<char> = t[1..].chars().collect();
        for (k, c) in letters.iter().enumerate() {
            if spec.short.contains(*c) {
                let rest: String = letters[k + 1..].iter().collect();
                let value = if rest.is_empty() {
                    i += 1;
                    args.get(i - 1).map(|w| w.text.clone())
                } else {
                    Some(rest)
                };
                p.opts.push(Opt { name: format!("-{c}"), value });
                break;
            }
            p.opts.push(Opt { name: format!("-{c}"), value: None });
        }
    }
    p
}

impl Parsed<'_> {
    /// Whether any of the names is present (`-r`, `--recursive`).
    pub fn has(&self, names: &[&str]) -> bool {
        self.opts.iter().any(|o| names.contains(&o.name.as_str()))
    }

    /// Values of the named options, in order.
    pub fn values<'s>(&'s self, names: &'s [&'s str]) -> impl Iterator<Item = &'s str> + 's {
        self.opts.iter().filter(move |o| names.contains(&o.name.as_str())).filter_map(|o| o.value.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &[&str]) -> Vec<Word> {
        s.iter().map(|t| Word { text: t.to_string(), ..Word::default() }).collect()
    }

    #[test]
    fn parses_short_long_and_attached_values() {
        let w = words(&["-sSLo", "out.txt", "--header", "H: v", "--data=@f", "-C", "dir", "url", "--", "-x"]);
        let p = parse(&w, Spec { short: "oC", long: &["--header"] });
        assert!(p.has(&["-s"]) && p.has(&["-L"]));
        assert_eq!(p.values(&["-o"]).collect::<Vec<_>>(), ["out.txt"]);
        assert_eq!(p.values(&["--header"]).collect::<Vec<_>>(), ["H: v"]);
        assert_eq!(p.values(&["--data"]).collect::<Vec<_>>(), ["@f"]);
        assert_eq!(p.values(&["-C"]).collect::<Vec<_>>(), ["dir"]);
        assert_eq!(p.operands.iter().map(|w| w.text.as_str()).collect::<Vec<_>>(), ["url", "-x"]);
        let w2 = words(&["-ofile"]);
        let q = parse(&w2, Spec { short: "o", long: &[] });
        assert_eq!(q.values(&["-o"]).collect::<Vec<_>>(), ["file"]);
    }
}
