//! `eurlex_transposition`: the national measures the Netherlands notified for a directive
//! (CELLAR's NIM, one SPARQL query, kept ten minutes), each with the id BesluitBron reads it by
//! where CELLAR's fields name one — a Staatsblad or Staatscourant publication (`stb-2018-401`,
//! read by `fetch` through Officiële Bekendmakingen) or a BWB law — and every other listed
//! as CELLAR gives it, marked as not resolved, never dropped.
//!
//! What this module does not do: ask Officiële Bekendmakingen or the BWB whether a
//! resolved id exists (`fetch` reads it, and says so when it does not).

use std::fmt::Write as _;
use std::sync::Arc;

use besluitbron_core::Units;
use besluitbron_core::cache::{CacheKey, DataClass};
use besluitbron_core::path::{Feedback, Served};
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

use super::ids;
use super::render::public_url;
use crate::call::{Call, Context, PlatformCall, Rendered, Reply, Structure, provenance, tool_error};
use crate::connectors::ids::own;
use crate::connectors::tool;
use crate::connectors::tool::ToolSpec;
use crate::platforms::eurlex::sparql::kind_name;
use crate::platforms::eurlex::{EurlexClient, Measure, PLATFORM, Transposition};
use crate::platforms::http::brief;

/// The tool.
pub const TOOL: ToolSpec = crate::tool! {
    name: "eurlex_transposition",
    title: "Dutch transposition of an EU directive",
    description: "The Dutch measures the Netherlands notified for an EU directive (CELEX, ELI or EUR-Lex link), \
                  from CELLAR: each with the id `fetch` reads (a Staatsblad/Staatscourant publication or BWB law) \
                  where CELLAR names one, else as CELLAR gives it, marked unresolved. Kept ten minutes.",
    arguments: TranspositionArgs,
    output: TranspositionShown,
    run: eurlex_transposition,
};

/// Arguments of `eurlex_transposition`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TranspositionArgs {
    /// The directive's CELEX number (32019L1937), ELI or EUR-Lex link.
    #[schemars(length(max = 200))]
    pub id: String,
}

/// One national measure, as `eurlex_transposition` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MeasureShown {
    /// The id `fetch` reads it by (`stb-2018-401`, `stcrt-2026-10004`, `BWBR0005537`);
    /// `None` when CELLAR's fields name no publication or law BesluitBron reads.
    pub id: Option<String>,
    /// True when `id` is given.
    pub resolved: bool,
    /// Its CELEX number at CELLAR (sector 7).
    pub celex: String,
    /// Its title.
    pub title: Option<String>,
    /// The kind of act, in CELLAR's (Dutch) words.
    pub kind: Option<String>,
    /// The official journal's name, number and date, as CELLAR gives them.
    pub journal: Option<String>,
    /// Its number in the journal.
    pub number: Option<String>,
    /// The journal's date.
    pub date: Option<String>,
    /// When it was notified to the Commission.
    pub notified: Option<String>,
    /// CELLAR's local id of it.
    pub local_id: Option<String>,
}

impl MeasureShown {
    fn of(m: &Measure) -> MeasureShown {
        let id = m.resolved();
        MeasureShown {
            resolved: id.is_some(),
            id,
            celex: m.celex.clone(),
            title: m.title.clone(),
            kind: m.type_act.clone(),
            journal: m.journal.clone(),
            number: m.number.clone(),
            date: m.journal_date.clone(),
            notified: m.notified.clone(),
            local_id: m.local_id.clone(),
        }
    }
}

/// `eurlex_transposition`'s structured content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TranspositionShown {
    /// The directive's CELEX number.
    pub id: String,
    /// What this is, in words.
    pub title: String,
    /// The act's kind.
    pub kind: Option<String>,
    /// The act on EUR-Lex.
    pub url: String,
    /// `eurlex`.
    pub platform: String,
    /// The Dutch measures, newest journal date first.
    pub measures: Vec<MeasureShown>,
    /// Measures with an id `fetch` reads.
    pub resolved: usize,
    /// Measures listed as CELLAR gives them.
    pub unresolved: usize,
    /// True when CELLAR lists more measures than shown.
    pub more: bool,
}

/// The answer: the measures, resolved ones with their id, the others marked.
pub fn render(t: &Transposition, served: Served) -> Rendered {
    let measures: Vec<MeasureShown> = t.measures.iter().map(MeasureShown::of).collect();
    let resolved = measures.iter().filter(|m| m.resolved).count();
    let kind = t.kind.as_deref().map(kind_name);
    let mut text = if measures.is_empty() {
        format!(
            "CELLAR lists no Dutch national measure for {}{}{}. The Netherlands may not have notified one (yet), or \
             it is notified under another act; eurlex_read {} shows the act and its dates.",
            t.celex,
            kind.map(|k| format!(" ({k})")).unwrap_or_default(),
            provenance(served),
            t.celex
        )
    } else {
        format!(
            "Dutch measures notified for {}{}{}: {} ({resolved} with an id `fetch` reads, {} as CELLAR gives them).",
            t.celex,
            kind.map(|k| format!(" ({k})")).unwrap_or_default(),
            provenance(served),
            measures.len(),
            measures.len() - resolved
        )
    };
    if kind.is_some_and(|k| !k.contains("directive")) {
        let _ = write!(
            text,
            "\nNote: {} is no directive; national measures transpose directives.",
            t.celex
        );
    }
    for m in &measures {
        let journal = match (&m.journal, &m.number, &m.date) {
            (None, None, None) => "no journal given".to_owned(),
            (j, n, d) => [j.as_deref(), n.as_deref(), d.as_deref()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" "),
        };
        let what = format!(
            "{} ({}; {journal}; CELEX {})",
            m.title.as_deref().unwrap_or("(no title)"),
            m.kind.as_deref().unwrap_or("kind not said"),
            m.celex
        );
        match &m.id {
            Some(id) => {
                let _ = write!(text, "\n- {id} — {what}");
            }
            None => {
                let _ = write!(
                    text,
                    "\n- not resolved — {what}: CELLAR names no publication or law BesluitBron reads"
                );
            }
        }
    }
    if t.more {
        let _ = write!(text, "\nCELLAR lists more measures than these {}.", measures.len());
    }
    let shown = TranspositionShown {
        id: t.celex.clone(),
        title: format!("Dutch transposition of {}", t.celex),
        kind: kind.map(str::to_owned),
        url: public_url(&t.celex, "nl"),
        platform: PLATFORM.as_str().to_owned(),
        resolved,
        unresolved: measures.len() - resolved,
        measures,
        more: t.more,
    };
    Rendered {
        text,
        structured: Structure::Own(serde_json::json!(shown)),
    }
}

/// The query's platform call for the directive `celex` (checked).
pub fn call(client: &Arc<EurlexClient>, celex: &str) -> PlatformCall<Transposition> {
    let key = CacheKey::new(PLATFORM, DataClass::Search, "transposition").param("celex", celex.to_owned());
    let (client, celex) = (Arc::clone(client), Arc::<str>::from(celex));
    PlatformCall::new(key, Units::ONE, move || {
        let (client, celex) = (Arc::clone(&client), Arc::clone(&celex));
        async move { Ok((client.transposition(&celex).await?, Feedback::default())) }
    })
}

async fn eurlex_transposition(ctx: &Context, call_: &Call, args: TranspositionArgs) -> Reply {
    let Some(asked) = ids::asked(own(PLATFORM, &args.id)) else {
        return tool_error(format!(
            "eurlex_transposition: `{}` is not a CELEX number (such as 32019L1937), an ELI or a EUR-Lex link; \
             eurlex_search with `kind` directive finds directives",
            brief(&args.id)
        ))
        .into();
    };
    let client = match tool::client::<EurlexClient>(ctx, PLATFORM) {
        Ok(c) => c,
        Err(reply) => return reply,
    };
    ctx.answer_kept(call_, call(&client, &asked.celex), render).await
}
