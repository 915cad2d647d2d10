//! `fetch` on `/mcp`: any id or link a person or a tool has — an ECLI, a BWB id, a CVDR
//! id, an Officiële Bekendmakingen id, a Tweede Kamer document or case number or GUID,
//! an OpenBesluitvorming id, an OpenTK number, the public links of every platform, and
//! every id `search` answers — read by the reading tool of the connector whose id it is,
//! answered as ChatGPT's connectors and deep research expect: `{id, title, text, url,
//! metadata}`, as the text item (JSON) and as the structured content.
//!
//! Each connector declares its own forms ([`crate::connectors::ids`]); this module asks
//! the connectors served, in turn, and decides between them:
//! - `platform:id` (`opentk:2016D00001`) names the platform; only its connector reads it;
//! - a bare id one connector recognises is that connector's;
//! - a bare id several recognise is read by the strongest [`Claim`](crate::connectors::ids::Claim) (the platform that
//!   issues the id over one that keeps a copy: a document number is the Tweede Kamer's,
//!   a `kst-` id Officiële Bekendmakingen'); two equal claims are an error naming the
//!   `platform:id` forms to choose from;
//! - anything else is an error listing every form read here.
//!
//! A fetch is one tool call through the whole stack (arguments, replay, route, time-out);
//! its reading is the reading tool's own function with typed arguments, run as a call of
//! that tool (its buffer, fair queue, limits, counters), so the text is exactly what the
//! tool gives for that id.
//!
//! **The readers' own arguments.** Besides `id`, `offset` and `length`, `fetch` declares
//! every argument of every reading tool ([`IdReader::paged`]: a law's `date` and
//! `article`, EUR-Lex's `language`, a debate's `speaker`), once, as `search` declares the
//! searches' ([`super::passed::union`]: each says which platforms take it). A fetch given
//! one is the reading tool's own call with them through the stack below replay (the
//! tool's rules, the route to its owner, its time-out), the id as the reading read it,
//! answered as the record it read ([`crate::call::Document`], typed, from the tool's
//! typed core here or on the owner, never read back from the tool's result); one the
//! reading tool does not take is refused by name with those it takes, nothing asked.
//! So a reading tool with a view is stood in for without losing its view: `fetch` has one
//! ([`super::views`]), which draws each answer as its reading tool's view does.
//!
//! What this module does not do: recognise ids (the connectors do) or render a document
//! (the reading tool does; `fetch` only wraps its answer).

use std::sync::Arc;

use besluitbron_core::PlatformId;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::ground::GroundRef;
use super::passed::{Declared, union};
use super::route::{Answer, Want};
use crate::call::{Call, Context, Document, Reply, tool_error, without_nulls};
use crate::connectors::ConnectorSpec;
use crate::connectors::ids::{IdReader, Paging, Reading, list_forms, split_platform};
use crate::connectors::schema::portable;
use crate::platforms::http::brief;

/// The tool's name.
pub const NAME: &str = "fetch";

/// Arguments of `fetch`: its own, and every argument of the reading tools, each passed
/// to the reading tool that takes it.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct FetchArgs {
    /// An id from `search`, or any id or link the description names;
    /// `platform:id` (`opentk:2021D02426`) picks the platform.
    #[schemars(length(min = 1, max = 1000))]
    pub id: String,
    /// The first character of a long text (from `metadata.next_offset`).
    #[serde(default)]
    pub offset: Option<usize>,
    /// Characters of text (each platform's default where not given).
    #[schemars(range(min = 1, max = 100_000))]
    #[serde(default)]
    pub length: Option<usize>,
    /// The reading tools' arguments, by name.
    #[serde(flatten)]
    #[schemars(skip)]
    pub passed: Map<String, Value>,
}

/// The arguments `fetch` declares itself; every other is a reading tool's.
const OWN: [&str; 3] = ["id", "offset", "length"];

/// What `fetch` answers (the text item holds the same object as JSON).
#[derive(Debug, Serialize, JsonSchema)]
pub struct FetchShown {
    /// The id asked, as given (what `fetch` reads again).
    pub id: String,
    /// Its title.
    pub title: String,
    /// The text, as the platform's reading tool gives it (a long one in pages).
    pub text: String,
    /// The original at the platform, where it has an address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `platform`, `tool`, `kind`, `date`, `organization` where known, and what the
    /// reading tool adds (`next_offset` reads on with `offset`).
    pub metadata: Map<String, Value>,
}

/// `fetch` over the connectors served that read ids.
pub struct Fetcher {
    readers: Vec<(PlatformId, &'static IdReader)>,
    /// Every platform served, read here or not: a `platform:` prefix naming one is read
    /// as that platform's.
    served: Vec<PlatformId>,
    /// The reading tools' arguments `fetch` takes, as its schema declares them.
    passed: Map<String, Value>,
}

impl Fetcher {
    /// The fetcher of `connectors` among the platforms `served`, or `None` when none
    /// reads ids.
    pub fn new(connectors: &[&'static ConnectorSpec], served: &[PlatformId]) -> Option<Fetcher> {
        let readers: Vec<(PlatformId, &'static IdReader)> = connectors
            .iter()
            .filter_map(|c| c.reads.map(|r| (c.platform, r)))
            .collect();
        if readers.is_empty() {
            return None;
        }
        let schemas: Vec<(&str, JsonObject)> = readers
            .iter()
            .flat_map(|(p, r)| {
                r.paged
                    .iter()
                    .map(|t| (p.as_str(), (*(t.definition)().input_schema).clone()))
            })
            .collect();
        let declared: Vec<Declared<'_>> = schemas
            .iter()
            .map(|(platform, schema)| Declared { platform, schema })
            .collect();
        let passed = union(&declared, &OWN);
        Some(Fetcher {
            readers,
            served: served.to_vec(),
            passed,
        })
    }

    /// The definition `tools/list` shows: the platforms read and the first form of each's
    /// ids (from the registry).
    pub fn definition(&self) -> Tool {
        let names: Vec<&str> = self.readers.iter().map(|(p, _)| p.display_name()).collect();
        let mut forms: Vec<&str> = Vec::new();
        for form in self.readers.iter().filter_map(|(_, r)| r.forms.first()) {
            if !forms.contains(&form.what) {
                forms.push(form.what);
            }
        }
        let mut tool = crate::connectors::tool::definition::<FetchArgs, FetchShown>(NAME, "Read any id or link", "");
        tool.description = Some(
            format!(
                "Reads one record by any id or link: a `search` result's id, or an id or link of {} ({}; and \
                 more). Answers {{id, title, text, url, metadata}}; a long text in pages (`offset` from \
                 metadata.next_offset). `platform:id` picks the platform. Each reader's own arguments are \
                 arguments here (each says which platforms take it; another is refused).",
                names.join(", "),
                forms.join("; ")
            )
            .into(),
        );
        let mut schema = (*tool.input_schema).clone();
        if let Some(Value::Object(properties)) = schema.get_mut("properties") {
            properties.extend(self.passed.clone());
        }
        // Unknown arguments are refused by name before any platform is asked.
        schema.insert("additionalProperties".into(), Value::Bool(false));
        tool.input_schema = Arc::new(schema);
        tool
    }

    /// Which reading `id` is, with the paging asked; or the message for the assistant.
    pub fn resolve(&self, id: &str, paging: Paging) -> Result<(PlatformId, Reading), String> {
        let id = id.trim();
        if let Some((platform, rest)) = split_platform(id, &self.served) {
            let Some((_, reader)) = self.readers.iter().find(|(p, _)| *p == platform) else {
                return Err(format!(
                    "`{}` names {}, which is not read here; the platforms read here: {}",
                    brief(id),
                    platform.display_name(),
                    self.platform_list()
                ));
            };
            return match (reader.read)(rest, paging) {
                Some(Ok(reading)) => Ok((platform, reading)),
                Some(Err(why)) => Err(why),
                None => Err(format!(
                    "`{}` is not an id {} reads; it reads {}",
                    brief(rest),
                    platform.display_name(),
                    list_forms([(platform, *reader)])
                )),
            };
        }
        let mut found: Vec<(PlatformId, Reading)> = Vec::new();
        let mut refused: Vec<String> = Vec::new();
        for (platform, reader) in &self.readers {
            match (reader.read)(id, paging) {
                Some(Ok(reading)) => found.push((*platform, reading)),
                Some(Err(why)) => refused.push(why),
                None => {}
            }
        }
        let Some(strongest) = found.iter().map(|(_, r)| r.claim).max() else {
            if let Some(why) = refused.into_iter().next() {
                return Err(why);
            }
            return Err(format!(
                "`{}` is no id or link BesluitBron reads. It reads `platform:id`, and ids and links such as {}",
                brief(id),
                list_forms(self.readers.iter().copied())
            ));
        };
        found.retain(|(_, r)| r.claim == strongest);
        if found.len() > 1 {
            let choices: Vec<String> = found
                .iter()
                .map(|(p, r)| format!("`{}:{}` ({})", p.as_str(), r.id, p.display_name()))
                .collect();
            return Err(format!(
                "`{}` fits several platforms; say which: {}",
                brief(id),
                choices.join(" or ")
            ));
        }
        Ok(found.remove(0))
    }

    fn platform_list(&self) -> String {
        let names: Vec<&str> = self.readers.iter().map(|(p, _)| p.as_str()).collect();
        names.join(", ")
    }

    /// Runs `fetch` for `call` with `arguments`: the reading's own function, or with a
    /// reading tool's arguments that tool's call through the stack below replay.
    pub async fn run(&self, ground: GroundRef<'_>, call: &Call, arguments: JsonObject) -> Reply {
        let args: FetchArgs = match crate::connectors::tool::arguments(call, arguments) {
            Ok(args) => args,
            Err(reply) => return reply,
        };
        let paging = Paging {
            offset: args.offset,
            length: args.length,
        };
        let refused = |message: String| -> Reply {
            tool_error(format!("{NAME}: {message} (nothing asked of any platform)")).into()
        };
        if let Some(unknown) = args.passed.keys().find(|k| !self.passed.contains_key(*k)) {
            let mut names: Vec<&str> = OWN.to_vec();
            names.extend(self.passed.keys().map(String::as_str));
            return refused(format!(
                "no reader takes an argument `{}`; the arguments are {}",
                unknown.chars().take(64).collect::<String>(),
                names.join(", ")
            ));
        }
        let (platform, reading) = match self.resolve(&args.id, paging) {
            Ok(found) => found,
            Err(message) => return refused(message),
        };
        if args.passed.is_empty() {
            return self.read(ground.ctx, call, platform, reading, &args.id).await;
        }
        let takes = taken(reading.tool);
        if let Some(other) = args.passed.keys().find(|k| !takes.contains(k)) {
            let its: Vec<String> = self
                .passed
                .keys()
                .filter(|k| takes.contains(k))
                .map(|k| format!("`{k}`"))
                .collect();
            let its = if its.is_empty() {
                "none".to_owned()
            } else {
                its.join(", ")
            };
            return refused(format!(
                "`{}` is read by {}, which takes no `{}`; of the readers' arguments it takes {its}",
                brief(&args.id),
                reading.tool.name,
                other.chars().take(64).collect::<String>(),
            ));
        }
        let mut asked = args.passed;
        asked.insert("id".into(), Value::from(reading.id.clone()));
        for (name, value) in [("offset", args.offset), ("length", args.length)] {
            if let Some(v) = value {
                asked.insert(name.into(), Value::from(v));
            }
        }
        // Its own time-out says which platform held it up; this call's own comes later.
        let inner = GroundRef {
            limit: super::lists::inner_limit(ground.limit),
            ..ground
        };
        let document = match ground
            .stack
            .in_place(inner, call, (reading.tool.name, Want::Document), asked)
            .await
        {
            Answer::Document(document) => *document,
            Answer::Result(result) => return result.into_result().into(),
            other => return other.into_result().into(),
        };
        let untitled = || format!("Untitled record {} of {}", reading.id, platform.display_name());
        answer(&args.id, platform, reading.tool.name, document, untitled).into()
    }

    /// Reads `reading` (`platform`'s, answered as `asked`) with its own function, as a
    /// call of its tool.
    async fn read(&self, ctx: &Context, call: &Call, platform: PlatformId, reading: Reading, asked: &str) -> Reply {
        let inner = Call {
            tool: reading.tool.name,
            platform: Some(platform),
            caller: Arc::clone(&call.caller),
            form: call.form.clone(),
            progress: call.progress.clone(),
            ct: call.ct.clone(),
            render_cache: call.render_cache.clone(),
        };
        let read = match (reading.run)(ctx, &inner).await {
            Ok(read) => read,
            Err(reply) => return reply,
        };
        let document = match read.into_document() {
            Ok(document) => document,
            Err(e) => return tool_error(e).into(),
        };
        let untitled = || format!("Untitled record {} of {}", reading.id, platform.display_name());
        answer(asked, platform, reading.tool.name, document, untitled).into()
    }
}

/// The names of `tool`'s arguments, as it declares them.
fn taken(tool: &crate::connectors::ToolSpec) -> Vec<String> {
    let mut schema = (*(tool.definition)().input_schema).clone();
    portable(&mut schema);
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

/// `fetch`'s answer for the id `asked` (answered as given): the `document` the reading
/// `tool` of `platform` read — its text as the tool gave it, its title (`untitled` says
/// one where the platform gives none) and public page at the top, the rest as metadata.
pub fn answer(
    asked: &str,
    platform: PlatformId,
    tool: &str,
    document: Document,
    untitled: impl FnOnce() -> String,
) -> CallToolResult {
    let Document {
        title,
        url,
        text,
        mut metadata,
    } = document;
    metadata.insert("platform".into(), Value::from(platform.as_str()));
    metadata.insert("tool".into(), Value::from(tool));
    let title = match title.trim() {
        "" => untitled(),
        _ => title,
    };
    let shown = FetchShown {
        id: asked.to_owned(),
        title,
        text,
        url,
        metadata,
    };
    let mut value = serde_json::to_value(&shown).unwrap_or_default();
    without_nulls(&mut value);
    let mut out = CallToolResult::success(vec![ContentBlock::text(value.to_string())]);
    out.structured_content = Some(value);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connectors::CONNECTORS;

    fn fetcher() -> Fetcher {
        Fetcher::new(&CONNECTORS.iter().collect::<Vec<_>>(), &crate::connectors::platforms())
            .expect("connectors read ids")
    }

    fn resolved(id: &str) -> Result<(PlatformId, String, &'static str), String> {
        fetcher()
            .resolve(id, Paging::default())
            .map(|(p, r)| (p, r.id, r.tool.name))
    }

    #[test]
    fn the_table_decides_a_bare_id_several_platforms_read_and_a_prefix_always_wins() {
        // Real ids: the Algoritmeregister motion (35510-16) is Tweede Kamer document
        // 2021D02426 of case 2021Z00984 (tweedekamer.nl/kamerstukken/moties/detail?
        // id=2021Z00984&did=2021D02426).
        assert_eq!(resolved("2021D02426").map(|r| r.0), Ok(crate::platforms::tk::PLATFORM));
        assert_eq!(
            resolved("opentk:2021D02426").map(|r| r.0),
            Ok(crate::platforms::opentk::PLATFORM)
        );
        assert_eq!(
            resolved("kst-35510-16").map(|r| r.0),
            Ok(crate::platforms::ob::PLATFORM)
        );
        assert_eq!(
            resolved("opentk:kst-35510-16").map(|r| r.0),
            Ok(crate::platforms::opentk::PLATFORM)
        );
        let e = resolved("bwb:ECLI:NL:RVS:2015:3394").unwrap_err();
        assert!(e.contains("not an id Basiswettenbestand reads"), "{e}");
    }

    #[test]
    fn a_meeting_and_an_activity_number_read_as_the_debate_and_opentk_keeps_agendas() {
        // Real: the committee debate on the MIVD of 2 July 2025 (meeting 29d8cf68-…,
        // activity 2025A04496) and the plenary debate 2025A04597 of 4 June 2025.
        let meeting = "vergadering:29d8cf68-423e-4ae9-b4f0-7e908c7f5311";
        let debate = |id: &str| Ok((crate::platforms::tk::PLATFORM, id.to_owned(), "tk_debate"));
        assert_eq!(resolved(meeting), debate(meeting));
        assert_eq!(
            resolved(
                "https://gegevensmagazijn.tweedekamer.nl/OData/v4/2.0/Vergadering(29D8CF68-423E-4AE9-B4F0-7E908C7F5311)"
            ),
            debate(meeting)
        );
        assert_eq!(resolved("2025A04597"), debate("2025A04597"));
        assert_eq!(resolved("2025a04597"), debate("2025A04597"));
        assert_eq!(
            resolved("https://www.tweedekamer.nl/debat_en_vergadering/commissievergaderingen/details?id=2025A04496"),
            debate("2025A04496")
        );
        // The agenda, documents and video: OpenTK's activity, by its prefix or its link.
        let agenda = |id: &str| Ok((crate::platforms::opentk::PLATFORM, id.to_owned(), "opentk_activity"));
        assert_eq!(resolved("opentk:2025A04597"), agenda("2025A04597"));
        assert_eq!(
            resolved("https://berthub.eu/tkconv/activiteit.html?nummer=2025A04597"),
            agenda("2025A04597")
        );
    }

    #[test]
    fn every_declared_example_reads_on_its_own_platform() {
        let f = fetcher();
        for (platform, reader) in &f.readers {
            for form in reader.forms {
                let asked = match split_platform(form.example, &crate::connectors::platforms()) {
                    Some(_) => form.example.to_owned(),
                    None => format!("{}:{}", platform.as_str(), form.example),
                };
                let found = f.resolve(&asked, Paging::default());
                assert_eq!(found.map(|(p, _)| p), Ok(*platform), "{}", form.example);
            }
        }
    }

    #[test]
    fn an_unknown_form_lists_every_form_read() {
        let e = resolved("hello world").unwrap_err();
        for form in [
            "ECLI",
            "BWBR0018451",
            "kst-36200-VII-5",
            "wetten.overheid.nl",
            "platform:id",
        ] {
            assert!(e.contains(form), "{form}: {e}");
        }
        let e = resolved("nope:123").unwrap_err();
        assert!(e.contains("no id or link"), "{e}");
    }

    #[test]
    fn the_answer_is_the_id_asked_the_documents_head_and_text_and_the_rest_as_metadata() {
        let mut metadata = Map::new();
        metadata.insert("platform_id".into(), Value::from("BWBR0018451"));
        metadata.insert("kind".into(), Value::from("wet"));
        metadata.insert("next_offset".into(), Value::from(10000));
        let document = Document {
            title: "Wet op de zorgtoeslag".into(),
            url: Some("https://wetten.overheid.nl/BWBR0018451/2025-06-01".into()),
            text: "Artikel 1\nDe tekst.".into(),
            metadata,
        };
        let asked = "https://wetten.overheid.nl/BWBR0018451/2025-06-01";
        let out = answer(
            asked,
            crate::platforms::bwb::PLATFORM,
            "bwb_read",
            document.clone(),
            || unreachable!("titled"),
        );
        let s = out.structured_content.clone().expect("structured");
        assert_eq!(s["id"], asked, "the id as given");
        assert_eq!(s["title"], "Wet op de zorgtoeslag");
        assert_eq!(s["text"], "Artikel 1\nDe tekst.");
        assert_eq!(s["url"], "https://wetten.overheid.nl/BWBR0018451/2025-06-01");
        assert_eq!(s["metadata"]["kind"], "wet");
        assert_eq!(s["metadata"]["next_offset"], 10000);
        assert_eq!(s["metadata"]["tool"], "bwb_read");
        assert_eq!(s["metadata"]["platform"], "bwb");
        let text: Value = serde_json::from_str(&out.content[0].as_text().expect("text").text).expect("JSON");
        assert_eq!(text, s, "the text item is the same object");
        // A record without a title is named, never by its id alone.
        let untitled = Document {
            title: " ".into(),
            url: None,
            ..document
        };
        let out = answer(
            "bwb:BWBR0018451",
            crate::platforms::bwb::PLATFORM,
            "bwb_read",
            untitled,
            || "Untitled record BWBR0018451 of Basiswettenbestand".to_owned(),
        );
        let s = out.structured_content.expect("structured");
        assert_eq!(s["title"], "Untitled record BWBR0018451 of Basiswettenbestand");
        assert!(s.get("url").is_none(), "{s}");
    }
}
