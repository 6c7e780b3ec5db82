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
}

/// The built-in price table (USD per million tokens, Anthropic list prices), matched by the
/// longest model-name prefix. A policy `[prices]` table replaces or adds entries; a model with
/// no entry has no cost, which a breaker treats as a metric it cannot compute.
pub const DEFAULT_PRICES: &[(&str, Price)] = &[
    ("claude-opus-4", Price::of(5.0, 25.0)),
    ("claude-opus-4-0", Price::of(15.0, 75.0)),
    ("claude-opus-4-1", Price::of(15.0, 75.0)),
    ("claude-opus-4-2025", Price::of(15.0, 75.0)),
    ("claude-sonnet-4", Price::of(3.0, 15.0)),
    ("claude-3-7-sonnet", Price::of(3.0, 15.0)),
    ("claude-3-5-sonnet", Price::of(3.0, 15.0)),
    ("claude-haiku-4", Price::of(1.0, 5.0)),
    ("claude-3-5-haiku", Price::of(0.8, 4.0)),
    ("claude-3-haiku", Price::of(0.25, 1.25)),
];

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
    /// Its cost, when the model has a price.
    pub usd: Option<f64>,
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
    let n = |k: &str| usage.get(k).and_then(serde_json::Value::as_u64).unwrap_or(0);
    let (input, output) = (n("input_tokens"), n("output_tokens"));
    let (cw, cr) = (n("cache_creation_input_tokens"), n("cache_read_input_tokens"));
    let model = msg.get("model").and_then(serde_json::Value::as_str).unwrap_or("").to_string();
    let usd = price_for(prices, &model).map(|p| {
        (input as f64 * p.input + output as f64 * p.output + cw as f64 * p.cache_write + cr as f64 * p.cache_read) / 1e6
    });
    Some(MessageUsage {
        id: msg.get("id").and_then(serde_json::Value::as_str).unwrap_or("").to_string(),
        model,
        tokens: input.saturating_add(output).saturating_add(cw).saturating_add(cr),
        usd,
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
    fn cache_tokens_are_priced() {
        let line = r#"{"type":"assistant","message":{"id":"m1","model":"claude-sonnet-4-5","usage":{"input_tokens":1000000,"output_tokens":0,"cache_creation_input_tokens":1000000,"cache_read_input_tokens":1000000}}}"#;
        let m = parse_line(line, &default_prices()).unwrap();
        assert_eq!(m.tokens, 3_000_000);
        assert!((m.usd.unwrap() - (3.0 + 3.75 + 0.3)).abs() < 1e-9);
        assert_eq!(parse_line(r#"{"type":"user","usage":{}}"#, &default_prices()), None);
        assert_eq!(parse_line("not json \"usage\"", &default_prices()), None);
    }
}
