//! `search` on `/mcp`: one question over every platform with a keyword search, in
//! parallel, each asked as the caller through the whole stack of its own tool (client
//! limits were the request's; then arguments, the buffer, coalescing, the platform's fair
//! queue), so asking here costs a platform exactly what asking its tool costs.
//!
//! Each platform's answer is read by its connector ([`KeywordSearch`]) into the shared
//! vocabulary: results with `id`, the `tool` that reads them, `title`, `date`, `kind`,
//! `organization`, `url`, and `total` with `total_is_exact`. A platform that fails says
//! why (its tool's error, naming it); one without a keyword search says how to search
//! it; one still busy after [`Searcher::pending_after`] is reported as pending — its call
//! runs on and its answer lands in the buffer, so asking again is answered from there.
//!
//! What this module does not do: rank results across platforms (each platform's order
//! is its own), or ask a platform that has no keyword search.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::arguments::Rules;
use super::{Calls, Scope, ToolRequest};
use crate::call::{tool_error, without_nulls};
use crate::connectors::search::{Asked, KeywordSearch};
use crate::connectors::vocabulary::{Item, Listing};
use crate::identity::Caller;

/// The tool's name.
pub const NAME: &str = "search";

/// Results per platform by default, and at most.
const DEFAULT_LIMIT: u32 = 5;
const MAX_LIMIT: u32 = 20;

/// How long `search` waits for the slowest platform at most, before it reports it as
/// pending (less when the request's own time limit is shorter).
const PENDING_AFTER: Duration = Duration::from_secs(20);

/// Arguments of `search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Words to find, e.g. `stikstof` or `fietsparkeren Utrecht`.
    #[schemars(length(min = 1, max = 500))]
    pub query: String,
    /// Results per platform (default 5).
    #[schemars(range(min = 1, max = 20))]
    #[serde(default)]
    pub limit: Option<u32>,
    /// First day (platforms that filter on dates).
    #[schemars(length(max = 10), extend("format" = "date"))]
    #[serde(default)]
    pub date_from: Option<String>,
    /// Last day (inclusive).
    #[schemars(length(max = 10), extend("format" = "date"))]
    #[serde(default)]
    pub date_to: Option<String>,
}

/// `search`'s structured content.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchShown {
    /// The words searched.
    pub query: String,
    /// One entry per platform, in the order of the tool list.
    pub platforms: Vec<PlatformResults>,
}

/// What one platform answered.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PlatformResults {
    /// The platform's id (`obv`, `tk`, …).
    pub platform: &'static str,
    /// Its name.
    pub name: &'static str,
    /// The tool asked (and to ask for more: `offset`, filters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<&'static str>,
    /// `ok`, `failed`, `pending` or `no_keyword_search`.
    pub status: &'static str,
    /// All results of the question at the platform, when it says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether `total` is exact.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_is_exact: Option<bool>,
    /// The results shown.
    pub results: Vec<Item>,
    /// Why it failed, is pending, or has no keyword search.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The definition `tools/list` shows (made portable by the caller).
pub fn definition() -> Tool {
    crate::connectors::tool::definition::<SearchArgs, SearchShown>(
        NAME,
        "Search every platform",
        "One search over every platform that searches by words, at once: council decisions (OpenBesluitvorming), the \
        Tweede Kamer (titles; OpenTK full text), official publications, national legislation and local regulations. \
        Per platform: results with the `id` and the `tool` that reads each, and the total; Rechtspraak has no word \
        search (the answer says how to find rulings). A platform busy after about 20 s is reported as pending; asking \
        again is answered from the buffer. Go deeper with one platform's own search.",
    )
}

/// The search of one address: its calls, and its argument rules (read once).
pub struct Searcher {
    rules: Rules,
}

/// Where `search` reports progress: (platforms answered, platforms asked, message).
pub type SearchProgress = Arc<dyn Fn(u32, u32, String) + Send + Sync>;

impl Searcher {
    /// The searcher of `definition`'s schema.
    pub fn new(definition: &Tool) -> Searcher {
        Searcher {
            rules: Rules::of(&definition.input_schema),
        }
    }

    /// How long it waits for the slowest platform.
    fn pending_after(calls: &Calls) -> Duration {
        PENDING_AFTER
            .min(calls.request_timeout().saturating_sub(Duration::from_secs(2)))
            .max(Duration::from_secs(1))
    }

    /// Runs `search` for `caller` with `arguments`.
    pub async fn run(
        &self,
        calls: &Arc<Calls>,
        mut arguments: Option<JsonObject>,
        caller: Arc<Caller>,
        progress: Option<SearchProgress>,
    ) -> CallToolResult {
        let platform_word = "every platform";
        if let Some(a) = arguments.as_mut() {
            self.rules.coerce(a);
        }
        if let Err(message) = self.rules.check(arguments.as_ref()) {
            return tool_error(format!("{NAME}: {message} (nothing asked of {platform_word})"));
        }
        let args: SearchArgs = match serde_json::from_value(serde_json::Value::Object(arguments.unwrap_or_default())) {
            Ok(a) => a,
            Err(e) => {
                return tool_error(format!(
                    "{NAME}: {e} (nothing asked of {platform_word}; see the tool's inputSchema)"
                ));
            }
        };
        let asked = match asked(&args) {
            Ok(a) => a,
            Err(message) => return tool_error(format!("{NAME}: {message} (nothing asked of {platform_word})")),
        };
        let _running = calls.running_guard();
        let wait = Self::pending_after(calls);
        let deadline = tokio::time::Instant::now() + wait;

        // Every keyword search at once, each its own task: one still running at the
        // deadline runs on and fills the buffer.
        let mut groups: Vec<PlatformResults> = Vec::new();
        let mut running = FuturesUnordered::new();
        for c in calls.registry() {
            let mut group = PlatformResults {
                platform: c.platform.as_str(),
                name: c.platform.display_name(),
                tool: None,
                status: "no_keyword_search",
                total: None,
                total_is_exact: None,
                results: Vec::new(),
                message: None,
            };
            match c.search {
                KeywordSearch::Without(why) => group.message = Some(why.to_owned()),
                KeywordSearch::Tool(spec) => {
                    group.tool = Some(spec.tool);
                    group.status = "pending";
                    let request = ToolRequest {
                        name: spec.tool.into(),
                        arguments: Some((spec.arguments)(&asked)),
                        caller: Arc::clone(&caller),
                        replay: None,
                        progress: None,
                        ct: CancellationToken::new(),
                    };
                    let calls = Arc::clone(calls);
                    let index = groups.len();
                    let task = tokio::spawn(async move { calls.call(Scope::All, request).await });
                    running.push(async move { (index, spec, task.await) });
                }
            }
            groups.push(group);
        }
        let asked_count = running.len() as u32;
        let mut answered = 0;
        loop {
            let next = tokio::time::timeout_at(deadline, running.next()).await;
            let Ok(Some((index, spec, joined))) = next else {
                break;
            };
            answered += 1;
            let group = &mut groups[index];
            match joined {
                Ok(Ok(result)) if result.is_error != Some(true) => {
                    match result.structured_content.as_ref().and_then(Listing::read) {
                        Some(Listing { results, tally }) => {
                            group.status = "ok";
                            group.total = tally.total;
                            group.total_is_exact = tally.total.map(|_| tally.total_is_exact);
                            group.results = results;
                        }
                        None => {
                            group.status = "failed";
                            group.message = Some(format!(
                                "{}'s answer could not be read; ask {} directly",
                                group.name, spec.tool
                            ));
                        }
                    }
                }
                Ok(Ok(result)) => {
                    group.status = "failed";
                    group.message = Some(first_text(&result));
                }
                Ok(Err(e)) => {
                    group.status = "failed";
                    group.message = Some(e.message.to_string());
                }
                Err(_) => {
                    group.status = "failed";
                    group.message = Some(format!(
                        "BesluitBron's call to {} stopped; try {} again",
                        group.name, spec.tool
                    ));
                }
            }
            if let Some(p) = &progress {
                p(
                    answered,
                    asked_count,
                    format!("{} answered ({answered} of {asked_count})", group.name),
                );
            }
        }
        for group in groups.iter_mut().filter(|g| g.status == "pending") {
            group.message = Some(format!(
                "{} had not answered after {} s (its queue may be long); its search goes on, and asking again \
                 shortly is answered from BesluitBron's buffer",
                group.name,
                wait.as_secs()
            ));
        }
        let shown = SearchShown {
            query: asked.query.clone(),
            platforms: groups,
        };
        let mut value = serde_json::to_value(&shown).unwrap_or_default();
        without_nulls(&mut value);
        let mut result = CallToolResult::success(vec![ContentBlock::text(text(&shown))]);
        result.structured_content = Some(value);
        result
    }
}

/// The shared question from `args`, or why it cannot be asked.
fn asked(args: &SearchArgs) -> Result<Asked, String> {
    let query = args.query.split_whitespace().collect::<Vec<_>>().join(" ");
    if query.is_empty() {
        return Err("`query` needs at least one word".into());
    }
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(format!("`limit` must be 1 to {MAX_LIMIT}, not {limit}"));
    }
    for (name, day) in [("date_from", &args.date_from), ("date_to", &args.date_to)] {
        if let Some(day) = day
            && !is_day(day)
        {
            return Err(format!("`{name}` must be a day written YYYY-MM-DD, e.g. 2026-01-31"));
        }
    }
    Ok(Asked {
        query,
        limit,
        date_from: args.date_from.clone(),
        date_to: args.date_to.clone(),
    })
}

/// Whether `s` is a day written YYYY-MM-DD that the calendar has.
fn is_day(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: std::ops::Range<usize>| s[r].parse::<u32>().ok();
    let (Some(y), Some(m), Some(d)) = (num(0..4), num(5..7), num(8..10)) else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// A tool result's first text.
fn first_text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .find_map(|c| c.as_text().map(|t| t.text.clone()))
        .unwrap_or_else(|| "the platform's tool failed without a message".into())
}

/// The text an assistant reads: per platform, its total and results with id and tool.
fn text(shown: &SearchShown) -> String {
    let mut out = format!("Search for `{}`:\n", shown.query);
    for g in &shown.platforms {
        out.push('\n');
        match g.status {
            "ok" if g.results.is_empty() => out.push_str(&format!(
                "{}: nothing found for these words ({} searched; fewer or other words, or no dates, widen it).\n",
                g.name,
                g.tool.unwrap_or_default()
            )),
            "ok" => {
                let total = match (g.total, g.total_is_exact) {
                    (Some(t), Some(true)) => format!(" of {t}"),
                    (Some(t), _) => format!(" of about {t}"),
                    (None, _) => String::new(),
                };
                out.push_str(&format!(
                    "{}: {}{total} (more with {}):\n",
                    g.name,
                    g.results.len(),
                    g.tool.unwrap_or_default()
                ));
                for r in &g.results {
                    let mut about: Vec<&str> = Vec::new();
                    for part in [&r.date, &r.kind, &r.organization].into_iter().flatten() {
                        about.push(part);
                    }
                    out.push_str(&format!(
                        "- {} ({}) — {} id `{}`\n",
                        r.title,
                        about.join(", "),
                        r.tool.as_deref().unwrap_or_default(),
                        r.id
                    ));
                }
            }
            _ => out.push_str(&format!(
                "{} ({}): {}\n",
                g.name,
                g.status.replace('_', " "),
                g.message.as_deref().unwrap_or_default()
            )),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_are_checked_against_the_calendar() {
        for ok in ["2026-01-31", "2024-02-29", "2000-02-29"] {
            assert!(is_day(ok), "{ok}");
        }
        for bad in [
            "2026-02-29",
            "1900-02-29",
            "2026-13-01",
            "2026-1-01",
            "1 januari 2026",
            "2026-04-31",
            "",
        ] {
            assert!(!is_day(bad), "{bad}");
        }
    }

    #[test]
    fn the_question_is_checked_before_any_platform_is_asked() {
        let args = |v: serde_json::Value| serde_json::from_value::<SearchArgs>(v).expect("parses");
        assert!(asked(&args(serde_json::json!({"query": "  "}))).is_err());
        assert!(asked(&args(serde_json::json!({"query": "a", "limit": 21}))).is_err());
        let e = asked(&args(serde_json::json!({"query": "a", "date_from": "1 jan"}))).expect_err("a bad day");
        assert!(e.contains("YYYY-MM-DD"), "{e}");
        let a = asked(&args(
            serde_json::json!({"query": " stikstof   boeren ", "date_to": "2026-03-31"}),
        ))
        .expect("ok");
        assert_eq!(
            (a.query.as_str(), a.limit, a.date_to.as_deref()),
            ("stikstof boeren", 5, Some("2026-03-31"))
        );
    }
}
