//! Token use and cost from the Claude Code transcript: each `"type":"assistant"` line carries
//! `message.id`, `message.model` and `message.usage`. One API message is written as several lines
//! (one per content block) that repeat the same id and usage, so a message counts once.

use serde::{Deserialize, Serialize};

/// USD per million tokens for one model family.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    /// Input tokens.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Tokens written to the prompt cache.
    pub cache_write: f64,
    /// Tokens read from the prompt cache.
    pub cache_read: f64,
}

impl Price {
    const fn of(input: f64, output: f64) -> Price {
        Price { input, output, cache_write: input * 1.25, cache_read: input * 0.1 }
    }

    const fn with(input: f64, output: f64, cache_write: f64, cache_read: f64) -> Price {
        Price { input, output, cache_write, cache_read }
    }
}

/// The built-in price table (USD per million tokens, Anthropic list prices as published on the
/// provider's pricing page in November 2026), matched by the longest model-name prefix. A
/// policy `[prices]` table replaces or adds entries. A model with no entry is priced at the
/// table's ceiling ([`ceiling`]: the highest price of each token kind), so a budget can only
/// trip early for it, never late, and the message is marked estimated.
///
/// Cache writes are priced at the 5-minute rate (1.25× input). Prefixes: `claude-opus-4` covers
/// Opus 4.5 … 4.8 ($5/$25) while `claude-opus-4-0`, `-4-1` and the dated `-4-2025…` ids are the
/// $15/$75 Opus 4 and 4.1. Haiku 5.5 has two bands by prompt length; the table holds the upper
/// band (a prompt over 100k tokens), so its spend is an upper bound too.
pub const DEFAULT_PRICES: &[(&str, Price)] = &[
    ("claude-fable-5", Price::with(10.0, 50.0, 12.5, 1.0)),
    ("claude-fable-5-1", Price::with(10.0, 50.0, 12.5, 0.25)),
    ("claude-mythos-5", Price::with(10.0, 50.0, 12.5, 1.0)),
    ("claude-mythos-5-1", Price::with(10.0, 50.0, 12.5, 0.25)),
    ("claude-opus-5", Price::of(5.0, 25.0)),
    ("claude-opus-5-5", Price::with(4.0, 20.0, 5.0, 0.2)),
    ("claude-opus-4", Price::of(5.0, 25.0)),
    ("claude-opus-4-0", Price::of(15.0, 75.0)),
    ("claude-opus-4-1", Price::of(15.0, 75.0)),
    ("claude-opus-4-2025", Price::of(15.0, 75.0)),
    ("claude-3-opus", Price::of(15.0, 75.0)),
    ("claude-sonnet-5", Price::of(2.0, 10.0)),
    ("claude-sonnet-5-5", Price::with(2.0, 10.0, 2.5, 0.1)),
    ("claude-sonnet-4", Price::of(3.0, 15.0)),
    ("claude-3-7-sonnet", Price::of(3.0, 15.0)),
    ("claude-3-5-sonnet", Price::of(3.0, 15.0)),
    ("claude-haiku-5-5", Price::with(0.5, 2.5, 0.625, 0.05)),
    ("claude-haiku-4", Price::of(1.0, 5.0)),
    ("claude-3-5-haiku", Price::of(0.8, 4.0)),
    ("claude-3-haiku", Price::of(0.25, 1.25)),
];

/// The highest price of each token kind in a table: what a model without an entry is charged
/// (an upper bound). `None` for an empty table.
pub fn ceiling(prices: &[(String, Price)]) -> Option<Price> {
    let mut it = prices.iter().map(|(_, p)| *p);
    let first = it.next()?;
    Some(it.fold(first, |a, p| Price {
        input: a.input.max(p.input),
        output: a.output.max(p.output),
        cache_write: a.cache_write.max(p.cache_write),
        cache_read: a.cache_read.max(p.cache_read),
    }))
}

/// The price for a model: the entry with the longest matching prefix (`*` matches any model).
pub fn price_for<'a>(prices: &'a [(String, Price)], model: &str) -> Option<&'a Price> {
    prices
        .iter()
        .filter(|(prefix, _)| prefix == "*" || model.starts_with(prefix.as_str()))
        .max_by_key(|(prefix, _)| if prefix == "*" { 0 } else { prefix.len() + 1 })
        .map(|(_, p)| p)
}

/// One assistant message's usage.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageUsage {
    /// The API message id.
    pub id: String,
    /// The model that answered.
    pub model: String,
    /// Input + output + cache tokens.
    pub tokens: u64,
    /// Its cost; `None` when it cannot be computed (usage without token counts, or an empty
    /// price table).
    pub usd: Option<f64>,
    /// The model had no price: `usd` is the table's ceiling, an upper bound.
    pub estimated: bool,
}

/// Reads one transcript line. `None` for lines that are not assistant messages with usage.
pub fn parse_line(line: &str, prices: &[(String, Price)]) -> Option<MessageUsage> {
    // Cheap test before parsing: most lines are not assistant messages.
    if !line.contains("\"usage\"") {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    if v.get("type")?.as_str()? != "assistant" {
        return None;
    }
    let msg = v.get("message")?;
    let usage = msg.get("usage")?;
    let n = |k: &str| usage.get(k).and_then(serde_json::Value::as_u64);
    // The two counts every message has; without them the cost is unknown, not zero.
    let counted = n("input_tokens").zip(n("output_tokens"));
    let (input, output) = counted.unwrap_or((0, 0));
    let (cw, cr) = (n("cache_creation_input_tokens").unwrap_or(0), n("cache_read_input_tokens").unwrap_or(0));
    let model = msg.get("model").and_then(serde_json::Value::as_str).unwrap_or("").to_string();
    let (price, estimated) = match price_for(prices, &model) {
        Some(p) => (Some(*p), false),
        None => (ceiling(prices), true),
    };
    // Newer transcripts split cache writes by lifetime; one-hour writes cost twice the input
    // price (the 5-minute rate is `cache_write`).
    let cw_1h = usage
        .get("cache_creation")
        .and_then(|c| c.get("ephemeral_1h_input_tokens"))
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0)
        .min(cw);
    let usd = price.filter(|_| counted.is_some()).map(|p| {
        (input as f64 * p.input
            + output as f64 * p.output
            + (cw - cw_1h) as f64 * p.cache_write
            + cw_1h as f64 * p.input * 2.0
            + cr as f64 * p.cache_read)
            / 1e6
    });
    Some(MessageUsage {
        id: msg.get("id").and_then(serde_json::Value::as_str).unwrap_or("").to_string(),
        model,
        tokens: input.saturating_add(output).saturating_add(cw).saturating_add(cr),
        usd,
        estimated,
    })
}

/// The default table as owned entries.
pub fn default_prices() -> Vec<(String, Price)> {
    DEFAULT_PRICES.iter().map(|(k, p)| (k.to_string(), *p)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_wins() {
        let t = default_prices();
        assert_eq!(price_for(&t, "claude-opus-4-8").map(|p| p.input), Some(5.0));
        assert_eq!(price_for(&t, "claude-opus-4-1-20250805").map(|p| p.input), Some(15.0));
        assert_eq!(price_for(&t, "claude-opus-4-20250514").map(|p| p.input), Some(15.0));
        assert_eq!(price_for(&t, "claude-sonnet-4-5").map(|p| p.output), Some(15.0));
        assert_eq!(price_for(&t, "gpt-5"), None);
        // Real model ids of each generation.
        for (model, input, output) in [
            ("claude-fable-5-1", 10.0, 50.0),
            ("claude-fable-5", 10.0, 50.0),
            ("claude-mythos-5-1", 10.0, 50.0),
            ("claude-opus-5-5", 4.0, 20.0),
            ("claude-opus-5-5[1m]", 4.0, 20.0),
            ("claude-opus-5", 5.0, 25.0),
            ("claude-opus-4-8", 5.0, 25.0),
            ("claude-opus-4-6", 5.0, 25.0),
            ("claude-opus-4-5-20251101", 5.0, 25.0),
            ("claude-opus-4-1-20250805", 15.0, 75.0),
            ("claude-opus-4-0", 15.0, 75.0),
            ("claude-sonnet-5-5", 2.0, 10.0),
            ("claude-sonnet-5", 2.0, 10.0),
            ("claude-sonnet-4-6", 3.0, 15.0),
            ("claude-haiku-5-5", 0.5, 2.5),
            ("claude-sonnet-4-5-20250929", 3.0, 15.0),
            ("claude-sonnet-4-20250514", 3.0, 15.0),
            ("claude-3-7-sonnet-20250219", 3.0, 15.0),
            ("claude-haiku-4-5-20251001", 1.0, 5.0),
            ("claude-3-5-haiku-20241022", 0.8, 4.0),
            ("claude-3-opus-20240229", 15.0, 75.0),
            ("claude-3-haiku-20240307", 0.25, 1.25),
        ] {
            let p = price_for(&t, model).unwrap_or_else(|| panic!("{model} has no price"));
            assert_eq!((p.input, p.output), (input, output), "{model}");
        }
        let mut t = t;
        t.push(("*".into(), Price::of(1.0, 1.0)));
        assert_eq!(price_for(&t, "gpt-5").map(|p| p.input), Some(1.0));
        assert_eq!(price_for(&t, "claude-sonnet-4").map(|p| p.input), Some(3.0));
    }

    #[test]
    fn parses_the_recorded_transcript() {
        let text = include_str!("../../tests/fixtures/transcript.jsonl");
        let t = default_prices();
        let msgs: Vec<MessageUsage> = text.lines().filter_map(|l| parse_line(l, &t)).collect();
        assert_eq!(msgs.len(), 6);
        assert!(msgs.iter().all(|m| m.model == "claude-opus-4-8" && m.tokens == 30));
        // 10 input at $5/M + 20 output at $25/M.
        let usd = msgs[0].usd.unwrap();
        assert!((usd - (10.0 * 5.0 + 20.0 * 25.0) / 1e6).abs() < 1e-12, "{usd}");
    }

    #[test]
    fn parses_a_transcript_of_the_newest_cli() {
        // Claude Code 2.1.332 (see docs/hosts/claude-code.md): the model the CLI asked for, usage
        // with `cache_creation` split by lifetime, and many lines that are not messages.
        let text = include_str!("../../tests/fixtures/transcript-2.1.332.jsonl");
        let t = default_prices();
        let msgs: Vec<MessageUsage> = text.lines().filter_map(|l| parse_line(l, &t)).collect();
        assert_eq!(msgs.len(), 6);
        for m in &msgs {
            assert_eq!((m.model.as_str(), m.tokens, m.estimated), ("claude-opus-5-5", 120, false));
            // 100 input at $4/M + 20 output at $20/M.
            assert!((m.usd.unwrap() - (100.0 * 4.0 + 20.0 * 20.0) / 1e6).abs() < 1e-12);
        }
    }

    #[test]
    fn one_hour_cache_writes_cost_twice_the_input_price() {
        let line = r#"{"type":"assistant","message":{"id":"m1","model":"claude-opus-5","usage":{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":3000000,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_1h_input_tokens":1000000,"ephemeral_5m_input_tokens":2000000}}}}"#;
        let m = parse_line(line, &default_prices()).unwrap();
        // 2M at the 5-minute $6.25 + 1M at $10.
        assert!((m.usd.unwrap() - (2.0 * 6.25 + 10.0)).abs() < 1e-9, "{:?}", m.usd);
    }

    #[test]
    fn cache_tokens_are_priced() {
        let line = r#"{"type":"assistant","message":{"id":"m1","model":"claude-sonnet-4-5","usage":{"input_tokens":1000000,"output_tokens":0,"cache_creation_input_tokens":1000000,"cache_read_input_tokens":1000000}}}"#;
        let m = parse_line(line, &default_prices()).unwrap();
        assert_eq!(m.tokens, 3_000_000);
        assert!((m.usd.unwrap() - (3.0 + 3.75 + 0.3)).abs() < 1e-9);
        assert_eq!(parse_line(r#"{"type":"user","usage":{}}"#, &default_prices()), None);
        assert!(!m.estimated);
    }

    #[test]
    fn an_unknown_model_is_priced_at_the_ceiling_and_marked_estimated() {
        let t = default_prices();
        let c = ceiling(&t).unwrap();
        assert_eq!((c.input, c.output, c.cache_write, c.cache_read), (15.0, 75.0, 18.75, 1.5));
        let line = r#"{"type":"assistant","message":{"id":"m1","model":"claude-wholly-new-9","usage":{"input_tokens":1000000,"output_tokens":1000000}}}"#;
        let m = parse_line(line, &t).unwrap();
        assert!(m.estimated);
        assert!((m.usd.unwrap() - 90.0).abs() < 1e-9);
        // No price can be below the ceiling: a budget trips early for unknown models, never late.
        for (_, p) in &t {
            assert!(p.input <= c.input && p.output <= c.output && p.cache_read <= c.cache_read);
        }
        // A user's table with a more expensive entry raises the ceiling.
        let mut t2 = t.clone();
        t2.push(("in-house".into(), Price::of(40.0, 100.0)));
        assert!((parse_line(line, &t2).unwrap().usd.unwrap() - 140.0).abs() < 1e-9);
        // Nothing to bound with: cannot be computed.
        assert_eq!(parse_line(line, &[]).unwrap().usd, None);
    }

    #[test]
    fn usage_without_token_counts_cannot_be_computed() {
        let t = default_prices();
        for line in [
            r#"{"type":"assistant","message":{"id":"m1","model":"claude-opus-4-5","usage":{}}}"#,
            r#"{"type":"assistant","message":{"id":"m1","model":"claude-opus-4-5","usage":{"input_tokens":5}}}"#,
            r#"{"type":"assistant","message":{"id":"m1","model":"claude-opus-4-5","usage":{"input_tokens":"5","output_tokens":1}}}"#,
        ] {
            assert_eq!(parse_line(line, &t).unwrap().usd, None, "{line}");
        }
        assert_eq!(parse_line("not json \"usage\"", &default_prices()), None);
    }
}
