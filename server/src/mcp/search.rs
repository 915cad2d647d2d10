//! `search` on `/mcp`: one question over every platform with a keyword search, in
//! parallel. `search` is an entry of the tool table, so it comes through the one call
//! stack (arguments, replay, route, time-out); each platform's part is its keyword
//! search tool's own function ([`SearchSpec::tool`]), run as a call of that tool as the
//! caller (its arguments within its schema's rules, the buffer, coalescing, the
//! platform's fair queue, the same time-out; with several replicas, the platform's owner
//! through the same route), so asking here costs a platform exactly what asking its tool
//! costs.
//!
//! The answer is ChatGPT's search contract (OpenAI's MCP documentation; the schema it is
//! checked against is `tests/schemas/openai-search.schema.json`, with its provenance):
//! the text item is the JSON object `{"results": […]}` and the structured content is the
//! same object. `results` is one flat list across platforms, each platform's results in
//! its own order, taken in turns (every platform's first, then every second, …); each has
//! the `id` that `fetch` reads — bare where only its platform reads it, `platform:id`
//! where a bare id would be read by another ([`Searcher::fetch_id`]) — its `title`, its
//! `url` (http or https, only where the record has a public page), `platform`, and
//! `date` (YYYY-MM-DD), `kind` and `organization` where the platform gives them: a field
//! the platform does not give is left out, never made up. `tool` names the platform's
//! reading tool, which reads the same `id` (every reading tool reads its own
//! `platform:` prefix).
//!
//! Beside `results`: `query`, and `platforms`, one entry per platform with its `tool`
//! (to ask for more), its `status`, how many of its results are in the list, its `total`
//! with `total_is_exact`, and why it failed, is pending, or has no keyword search. Each
//! platform's answer is read by its connector ([`KeywordSearch`]) from the shared
//! vocabulary. One still busy after [`Searcher::pending_after`] is reported as pending —
//! its call runs on (counted as a running call, so the shutdown drain waits for it) and
//! its answer lands in the buffer, so asking again is answered from there.
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
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use besluitbron_core::PlatformId;

use super::arguments::Rules;
use super::fetch::Fetcher;
use super::ground::{Ground, GroundRef, until};
use super::passed::{Declared, closed_lists, union};
use super::route::Answer;
use crate::calendar;
use crate::call::{Call, Reply, Report, tool_error};
use crate::connectors::ConnectorSpec;
use crate::connectors::ids::Paging;
use crate::connectors::search::{Asked, KeywordSearch, SearchSpec};
use crate::connectors::vocabulary::{Item, Listing, Tally};

/// The tool's name.
pub const NAME: &str = "search";

/// Results per platform by default, and at most.
const DEFAULT_LIMIT: u32 = 5;
const MAX_LIMIT: u32 = 20;

/// How long `search` waits for the slowest platform at most, before it reports it as
/// pending (less when the request's own time limit is shorter).
const PENDING_AFTER: Duration = Duration::from_secs(20);

/// Arguments of `search`: its own, and every argument of the platforms' keyword search
/// tools ([`super::passed`]), each passed to the platforms whose tool takes it.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchArgs {
    /// Words to find, e.g. `stikstof` or `fietsparkeren Utrecht`.
    #[schemars(length(min = 1, max = 500))]
    pub query: String,
    /// Results per platform (default 5).
    #[schemars(range(min = 1, max = 20))]
    #[serde(default)]
    pub limit: Option<u32>,
    /// Only these platforms (default: every one).
    #[schemars(length(max = 20), inner(length(max = 40)))]
    #[serde(default)]
    pub platforms: Option<Vec<String>>,
    /// The platforms' arguments, by name.
    #[serde(flatten)]
    #[schemars(skip)]
    pub passed: Map<String, Value>,
}

/// The arguments `search` declares itself; every other is a platform's.
const OWN: [&str; 3] = ["query", "limit", "platforms"];

/// `search`'s answer: its text item (as JSON) and its structured content.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchShown {
    /// Every platform's results in one list, taken in turns.
    pub results: Vec<Found>,
    /// The words searched.
    pub query: String,
    /// One entry per platform, in the order of the tool list.
    pub platforms: Vec<PlatformResults>,
}

/// One result.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Found {
    /// What `fetch` reads (`platform:id` where a bare id is another platform's too).
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its public page or file (http or https), where it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The platform's id (`obv`, `tk`, …).
    pub platform: &'static str,
    /// Its day, YYYY-MM-DD.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// What kind of record it is, in the platform's words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The organisation it is of.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub organization: Option<String>,
    /// The platform's tool that reads it by this `id` too (paging, a file's source).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
}

/// Where one platform's part of a search stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// It answered (its results may be none).
    Ok,
    /// It failed; `error` says why and what to do.
    Failed,
    /// It had not answered when the search's time was up.
    Pending,
    /// It has no search by words (`tool` reads it otherwise).
    NoKeywordSearch,
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
    // The schema says string: tools/list has no room for the values (the description names them).
    #[schemars(with = "String")]
    pub status: Status,
    /// How many of its results are in `results`.
    pub shown: usize,
    /// All results of the question at the platform, when it says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether `total` is exact.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_is_exact: Option<bool>,
    /// Why it failed, is pending, found nothing, or has no keyword search.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Arguments given that its search does not take, or not with the value given (one
    /// outside its own list): its results are not narrowed by them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<String>,
}

/// What `search` says of itself in `tools/list` after the platforms it asks.
const DESCRIPTION_REST: &str = "Every platform search's own filters are arguments here, each passed to the platforms \
        that take it (the others name it as ignored); `platforms` picks platforms. A platform busy after 20 s is pending: \
        ask again.";

/// `search` over the connectors served: their keyword searches, and the `fetch` of
/// the same connectors, which decides how each result's id is written.
pub struct Searcher {
    parts: Vec<Part>,
    fetcher: Option<Fetcher>,
    /// The platforms' arguments `search` takes, as its schema declares them.
    passed: Map<String, Value>,
}

/// One connector's place in a search.
struct Part {
    platform: PlatformId,
    search: PartSearch,
}

/// A connector's keyword search as a search holds it.
enum PartSearch {
    /// Its spec, and the rules of its tool's arguments (read from its schema once), which
    /// the shared question's arguments for it pass as a direct call's would, and the
    /// closed lists of values its arguments have.
    Tool(&'static SearchSpec, Rules, Vec<(String, Vec<Value>)>),
    /// None: why, and how to search the platform instead.
    Without(&'static str),
}

/// One platform's part while the search runs: its entry, and its results as its tool
/// gave them.
struct Group {
    platform: PlatformId,
    entry: PlatformResults,
    items: Vec<Item>,
}

impl Searcher {
    /// The search over `connectors`, or `None` when none of them searches by words.
    pub fn new(connectors: &[&'static ConnectorSpec], served: &[PlatformId]) -> Option<Searcher> {
        if !connectors.iter().any(|c| matches!(c.search, KeywordSearch::Tool(_))) {
            return None;
        }
        let parts = connectors
            .iter()
            .map(|c| Part {
                platform: c.platform,
                search: match c.search {
                    KeywordSearch::Tool(spec) => {
                        let schema = (spec.tool.definition)().input_schema;
                        PartSearch::Tool(spec, Rules::of(&schema), closed_lists(&schema))
                    }
                    KeywordSearch::Without(why) => PartSearch::Without(why),
                },
            })
            .collect();
        let schemas: Vec<(&str, JsonObject)> = connectors
            .iter()
            .filter_map(|c| match c.search {
                KeywordSearch::Tool(spec) => {
                    Some((c.platform.as_str(), (*(spec.tool.definition)().input_schema).clone()))
                }
                KeywordSearch::Without(_) => None,
            })
            .collect();
        let declared: Vec<Declared<'_>> = schemas
            .iter()
            .map(|(platform, schema)| Declared { platform, schema })
            .collect();
        Some(Searcher {
            parts,
            fetcher: Fetcher::new(connectors, served),
            passed: union(&declared, &OWN),
        })
    }

    /// The definition `tools/list` shows (made portable by the caller): `search`'s own
    /// arguments, the platforms to choose from, and every platform's.
    pub fn definition(&self) -> Tool {
        let mut tool =
            crate::connectors::tool::definition::<SearchArgs, SearchShown>(NAME, "Search every platform", "");
        tool.description = Some(self.description().into());
        let mut schema = (*tool.input_schema).clone();
        if let Some(Value::Object(properties)) = schema.get_mut("properties") {
            let ids: Vec<Value> = self.parts.iter().map(|p| Value::from(p.platform.as_str())).collect();
            if let Some(Value::Object(platforms)) = properties.get_mut("platforms") {
                platforms.insert(
                    "items".into(),
                    serde_json::json!({"type": "string", "enum": ids, "maxLength": 40}),
                );
            }
            properties.extend(self.passed.clone());
        }
        // Unknown arguments are refused by name before any platform is asked.
        schema.insert("additionalProperties".into(), Value::Bool(false));
        tool.input_schema = Arc::new(schema);
        tool
    }

    /// What `search` says of itself: the platforms it asks and those it cannot, by name
    /// (from the registry).
    fn description(&self) -> String {
        let names = |without: bool| -> Vec<&str> {
            self.parts
                .iter()
                .filter(|p| matches!(p.search, PartSearch::Without(_)) == without)
                .map(|p| p.platform.display_name())
                .collect()
        };
        let without = match names(true).as_slice() {
            [] => String::new(),
            [one] => format!(" ({one} has no word search)"),
            many => format!(" ({} have no word search)", many.join(", ")),
        };
        format!(
            "One search by words over every platform at once: {}. Answers one list of results (`fetch` reads \
             each id), and per platform its total or why it failed{without}. {DESCRIPTION_REST}",
            names(false).join(", ")
        )
    }

    /// Whether `search` passes an argument named `name` to the platforms that take it.
    pub fn passes(&self, name: &str) -> bool {
        self.passed.contains_key(name)
    }

    /// How long it waits for the slowest platform, when one call may take `limit`.
    fn pending_after(limit: Duration) -> Duration {
        PENDING_AFTER
            .min(limit.saturating_sub(Duration::from_secs(2)))
            .max(Duration::from_secs(1))
    }

    /// The id `fetch` reads for `platform`'s result `id`: the bare id where `fetch`
    /// reads it as this platform's, else `platform:id` (a Tweede Kamer document number
    /// OpenTK found is the Kamer's when bare).
    pub fn fetch_id(&self, platform: PlatformId, id: &str) -> String {
        let bare_is_ours = self
            .fetcher
            .as_ref()
            .and_then(|f| f.resolve(id, Paging::default()).ok())
            .is_some_and(|(p, _)| p == platform);
        if bare_is_ours {
            id.to_owned()
        } else {
            format!("{}:{id}", platform.as_str())
        }
    }

    /// Runs `search` for `call` with `arguments` (checked against its schema by the
    /// stack): every keyword search at once, each its platform tool's own function run
    /// as a call of that tool, in a task of its own — one still running when the search
    /// answers runs on and fills the buffer.
    pub async fn run(&self, ground: GroundRef<'_>, call: &Call, arguments: JsonObject) -> Reply {
        let args: SearchArgs = match crate::connectors::tool::arguments(call, arguments) {
            Ok(args) => args,
            Err(reply) => return reply,
        };
        let asked = match self.checked(&args).and_then(|()| asked(&args)) {
            Ok(a) => a,
            Err(message) => return tool_error(format!("{NAME}: {message} (nothing asked of any platform)")).into(),
        };
        let chosen = |platform: PlatformId| {
            args.platforms
                .as_ref()
                .is_none_or(|p| p.iter().any(|id| id == platform.as_str()))
        };
        let wait = Self::pending_after(ground.limit);
        let deadline = tokio::time::Instant::now() + wait;
        // The parts' cancellation: a task's, or one of their own. Cancelled only while the
        // search still waits for them and its own request is cancelled (the client sent
        // `notifications/cancelled`, or went away); once the search has answered, a part
        // still running is never cancelled by its request's end: it fills the buffer that
        // its "pending" answer promised.
        let parts_ct = PARTS_CANCEL.try_with(CancellationToken::clone).unwrap_or_default();
        let mut groups: Vec<Group> = Vec::new();
        let mut running = FuturesUnordered::new();
        for part in self.parts.iter().filter(|p| chosen(p.platform)) {
            let mut entry = PlatformResults {
                platform: part.platform.as_str(),
                name: part.platform.display_name(),
                tool: None,
                status: Status::NoKeywordSearch,
                shown: 0,
                total: None,
                total_is_exact: None,
                message: None,
                ignored: Vec::new(),
            };
            match &part.search {
                PartSearch::Tool(spec, rules, lists) => {
                    entry.tool = Some(spec.tool.name);
                    entry.status = Status::Pending;
                    let index = groups.len();
                    let asking = Asking::new(spec, (rules, lists), (call, &parts_ct), &asked, &args.passed);
                    entry.ignored = asking.ignored.clone();
                    // In the search's span: each part's platform call is in its trace.
                    let task = tokio::spawn(tracing::Instrument::in_current_span(asking.run(ground.owned())));
                    running.push(async move { (index, spec, task.await) });
                }
                PartSearch::Without(why) => entry.message = Some((*why).to_owned()),
            }
            groups.push(Group {
                platform: part.platform,
                entry,
                items: Vec::new(),
            });
        }
        let asked_count = running.len() as u32;
        let mut answered = 0;
        loop {
            let next = tokio::select! {
                biased;
                () = call.ct.cancelled() => {
                    // Its own platform requests still waiting for their turn are withdrawn
                    // (one another caller also waits on is theirs); nobody reads this answer.
                    parts_ct.cancel();
                    return tool_error(format!("{NAME}: cancelled by the client")).into();
                }
                next = until(deadline, running.next()) => next,
            };
            let Some(Some((index, spec, joined))) = next else {
                break;
            };
            answered += 1;
            let group = &mut groups[index];
            record_answer(group, spec, joined);
            if let Some(progress) = &call.progress {
                progress(Report::Answered {
                    done: answered,
                    of: asked_count,
                    message: format!("{} answered ({answered} of {asked_count})", group.entry.name),
                });
            }
        }
        for group in groups.iter_mut().filter(|g| g.entry.status == Status::Pending) {
            group.entry.message = Some(format!(
                "{} had not answered after {} s (its queue may be long); its search goes on, and asking again \
                 shortly is answered from BesluitBron's buffer",
                group.entry.name,
                wait.as_secs()
            ));
        }
        let shown = self.shown(asked.query.clone(), groups);
        let value = serde_json::to_value(&shown).unwrap_or_default();
        let mut result = CallToolResult::success(vec![ContentBlock::text(value.to_string())]);
        result.structured_content = Some(value);
        result.into()
    }

    /// Why `args` cannot be asked of any platform: an argument no platform takes, or a
    /// platform not served here.
    fn checked(&self, args: &SearchArgs) -> Result<(), String> {
        if let Some(unknown) = args.passed.keys().find(|k| !self.passes(k)) {
            let mut names: Vec<&str> = OWN.to_vec();
            names.extend(self.passed.keys().map(String::as_str));
            return Err(format!(
                "no platform's search takes an argument `{}`; the arguments are {}",
                unknown.chars().take(64).collect::<String>(),
                names.join(", ")
            ));
        }
        for id in args.platforms.iter().flatten() {
            if !self.parts.iter().any(|p| p.platform.as_str() == id) {
                let ids: Vec<&str> = self.parts.iter().map(|p| p.platform.as_str()).collect();
                return Err(format!(
                    "`platforms` names `{}`, which is not served here; choose from {}",
                    id.chars().take(40).collect::<String>(),
                    ids.join(", ")
                ));
            }
        }
        Ok(())
    }

    /// The answer from every platform's part: one list, taken in turns from each
    /// platform's results in its own order.
    fn shown(&self, query: String, groups: Vec<Group>) -> SearchShown {
        let mut platforms = Vec::with_capacity(groups.len());
        let mut queues = Vec::with_capacity(groups.len());
        for mut group in groups {
            group.entry.shown = group.items.len();
            platforms.push(group.entry);
            queues.push((group.platform, group.items.into_iter()));
        }
        let mut results = Vec::new();
        loop {
            let before = results.len();
            for (platform, items) in &mut queues {
                if let Some(item) = items.next() {
                    results.push(self.found(*platform, item));
                }
            }
            if results.len() == before {
                break;
            }
        }
        SearchShown {
            results,
            query,
            platforms,
        }
    }

    /// One result as the list shows it.
    fn found(&self, platform: PlatformId, item: Item) -> Found {
        Found {
            id: self.fetch_id(platform, &item.id),
            title: item.title,
            url: item.url.filter(|u| is_web_link(u)),
            platform: platform.as_str(),
            date: item.date.as_deref().and_then(calendar::leading_day).map(str::to_owned),
            kind: item.kind,
            organization: item.organization,
            tool: item.tool,
        }
    }
}

/// Whether `url` is an http or https link.
fn is_web_link(url: &str) -> bool {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    (lower.starts_with("http://") && url.len() > 7) || (lower.starts_with("https://") && url.len() > 8)
}

tokio::task_local! {
    /// Set while a search runs for a task ([`super::tasks`]): the task's cancellation,
    /// which its parts' platform calls take, so a cancelled task withdraws its own
    /// requests still waiting for their turn (one another caller also waits on is left
    /// to them: the path withdraws only what nobody waits for), also between rounds.
    /// Unset, a part is cancelled only with its search's own request while the search
    /// waits: one its search no longer waits for fills the buffer.
    pub static PARTS_CANCEL: CancellationToken;
}

/// One platform's part of a search: its tool's call with the shared question as its
/// arguments, through the stack below replay as a direct call of that tool with them
/// would go (their schema's rules, the tool's buffer, coalescing, fair queue and
/// counters, the time-out; with several replicas, its platform's owner), answered as a
/// listing.
struct Asking {
    spec: &'static SearchSpec,
    arguments: JsonObject,
    /// The search's call, whose caller and render cache the part's call takes.
    asker: Call,
    /// The arguments given that the tool does not take.
    ignored: Vec<String>,
}

impl Asking {
    /// A part of `call`, which asked `asked` and gave `passed` for the platforms; `rules`
    /// and `lists` are its tool's. Each of `passed` the tool declares is its argument as
    /// given; the others it ignores, and so one whose value is not among the tool's own
    /// closed list (`sort: newest` where the tool sorts by `date_desc`).
    fn new(
        spec: &'static SearchSpec,
        (rules, lists): (&Rules, &[(String, Vec<Value>)]),
        (call, ct): (&Call, &CancellationToken),
        asked: &Asked,
        passed: &Map<String, Value>,
    ) -> Asking {
        let mut arguments = (spec.arguments)(asked);
        let mut ignored = Vec::new();
        for (name, value) in passed {
            let among = |(n, values): &(String, Vec<Value>)| n != name || values.contains(value);
            if rules.declares(name) && lists.iter().all(among) {
                arguments.insert(name.clone(), value.clone());
            } else {
                ignored.push(name.clone());
            }
        }
        let asker = Call {
            tool: NAME,
            platform: None,
            caller: Arc::clone(&call.caller),
            form: call.form.clone(),
            progress: None,
            ct: ct.clone(),
            render_cache: call.render_cache.clone(),
        };
        Asking {
            spec,
            arguments,
            asker,
            ignored,
        }
    }

    /// The part's answer: the listing, or the tool's result that stands for it (its
    /// error; the owner's when another replica owns the platform).
    async fn run(self, ground: Ground) -> Answer {
        let tool = self.spec.tool.name;
        ground
            .stack
            .listing(ground.as_ref(), &self.asker, tool, self.arguments)
            .await
    }
}

/// One platform's answer (or its failure) in its group: its status, its results or a
/// message saying why there are none.
fn record_answer(group: &mut Group, spec: &'static SearchSpec, joined: Result<Answer, tokio::task::JoinError>) {
    let entry = &mut group.entry;
    let listing = match joined {
        Ok(Answer::Listed(listing)) => *listing,
        // A tool's answer that is no listing and no error (an `organization` that is no
        // one source: the candidates) shows none of its results.
        Ok(Answer::Result(result)) if result.is_error != Some(true) => Listing {
            results: Vec::new(),
            tally: Tally::default(),
        },
        Ok(Answer::Result(result)) => {
            entry.status = Status::Failed;
            entry.message = Some(first_text(&result));
            return;
        }
        Ok(Answer::Hits(_) | Answer::Document(_)) | Err(_) => {
            entry.status = Status::Failed;
            entry.message = Some(format!(
                "BesluitBron's call to {} stopped; try {} again",
                entry.name, spec.tool.name
            ));
            return;
        }
    };
    let Listing { results, tally } = listing;
    entry.status = Status::Ok;
    entry.total = tally.total;
    entry.total_is_exact = tally.total.map(|_| tally.total_is_exact);
    if results.is_empty() {
        entry.message = Some(format!(
            "nothing found for these words ({} searched; fewer or other words, or no dates, widen it)",
            spec.tool.name
        ));
    }
    group.items = results;
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
    let day = |name: &str| -> Result<Option<String>, String> {
        match args.passed.get(name) {
            None => Ok(None),
            Some(Value::String(day)) if calendar::is_day(day) => Ok(Some(day.clone())),
            Some(_) => Err(format!("`{name}` must be a day written YYYY-MM-DD, e.g. 2026-01-31")),
        }
    };
    Ok(Asked {
        query,
        limit,
        date_from: day("date_from")?,
        date_to: day("date_to")?,
    })
}

/// A tool result's first text.
fn first_text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .find_map(|c| c.as_text().map(|t| t.text.clone()))
        .unwrap_or_else(|| "the platform's tool failed without a message".into())
}

#[cfg(test)]
mod tests {
    use super::*;

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

    fn searcher() -> Searcher {
        use crate::connectors::CONNECTORS;
        let connectors: Vec<_> = CONNECTORS.iter().collect();
        Searcher::new(&connectors, &crate::connectors::platforms()).expect("connectors search by words")
    }

    #[test]
    fn a_result_id_is_bare_where_fetch_reads_it_as_its_platforms_and_prefixed_elsewhere() {
        let s = searcher();
        // Real ids: the Algoritmeregister motion is Kamer document 2021D02426 of case
        // 2021Z00984, and Kamerstuk 35510-16 at Officiële Bekendmakingen.
        assert_eq!(s.fetch_id(crate::platforms::tk::PLATFORM, "2021D02426"), "2021D02426");
        assert_eq!(s.fetch_id(crate::platforms::tk::PLATFORM, "2021Z00984"), "2021Z00984");
        assert_eq!(
            s.fetch_id(crate::platforms::opentk::PLATFORM, "2021D02426"),
            "opentk:2021D02426"
        );
        assert_eq!(
            s.fetch_id(crate::platforms::ob::PLATFORM, "kst-35510-16"),
            "kst-35510-16"
        );
        assert_eq!(
            s.fetch_id(crate::platforms::opentk::PLATFORM, "kst-35510-16"),
            "opentk:kst-35510-16"
        );
        assert_eq!(
            s.fetch_id(crate::platforms::bwb::PLATFORM, "BWBR0018451"),
            "BWBR0018451"
        );
        assert_eq!(
            s.fetch_id(crate::platforms::cvdr::PLATFORM, "CVDR100394_2"),
            "CVDR100394_2"
        );
        // Every id given reads with fetch, on its own platform.
        let f = s.fetcher.as_ref().expect("a fetcher");
        for (platform, id) in [
            (crate::platforms::opentk::PLATFORM, "2021D02426"),
            (crate::platforms::tk::PLATFORM, "72f7ab9b-dc59-4e67-8a04-798a744c256e"),
            (crate::platforms::obv::PLATFORM, "meeting:notubiz:gemeente:soest:830424"),
        ] {
            let given = s.fetch_id(platform, id);
            let read = f.resolve(&given, Paging::default()).map(|(p, _)| p);
            assert_eq!(read, Ok(platform), "{given}");
        }
    }

    #[test]
    fn links_are_web_links_or_left_out() {
        assert!(is_web_link("https://zoek.officielebekendmakingen.nl/stb-2018-84.html"));
        assert!(is_web_link("HTTP://example.org/x"));
        for other in ["", "https://", "ftp://x/y", "/relative", "www.tweedekamer.nl"] {
            assert!(!is_web_link(other), "{other}");
        }
    }

    #[test]
    fn the_list_takes_each_platforms_results_in_turns_and_leaves_out_what_is_not_given() {
        let s = searcher();
        let group = |platform: PlatformId, ids: &[&str]| Group {
            platform,
            entry: PlatformResults {
                platform: platform.as_str(),
                name: platform.display_name(),
                tool: None,
                status: Status::Ok,
                shown: 0,
                total: Some(ids.len() as u64),
                total_is_exact: Some(true),
                message: None,
                ignored: Vec::new(),
            },
            items: ids
                .iter()
                .map(|id| {
                    Item::new(platform, "t", *id, format!("title {id}"))
                        .dated(Some("31 augustus 2026"))
                        .at(Some("javascript:alert(1)"))
                })
                .collect(),
        };
        let shown = s.shown(
            "stikstof".into(),
            vec![
                group(
                    crate::platforms::ob::PLATFORM,
                    &["stb-2018-84", "stb-2018-85", "stb-2018-86"],
                ),
                group(crate::platforms::opentk::PLATFORM, &["2021D02426"]),
            ],
        );
        let ids: Vec<&str> = shown.results.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["stb-2018-84", "opentk:2021D02426", "stb-2018-85", "stb-2018-86"]);
        assert_eq!(shown.platforms.iter().map(|p| p.shown).collect::<Vec<_>>(), [3, 1]);
        let v = serde_json::to_value(&shown.results[0]).expect("JSON");
        assert_eq!(
            v,
            serde_json::json!({"id": "stb-2018-84", "title": "title stb-2018-84", "platform": "ob", "tool": "t"}),
            "a date that is no day and a link that is no web link are left out"
        );
    }
}
