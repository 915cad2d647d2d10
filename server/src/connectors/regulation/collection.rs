//! What a regulation collection's connector declares as its own ([`Collection`]): what it
//! says ([`CollectionSpec`]) and the few functions of its record and arguments the
//! family's tools call; with the family's words for what they exchange ([`Version`],
//! [`Asked`]).
//!
//! What this module does not do: run a tool (the family's [`super::search`] and
//! [`super::read`] do).

use besluitbron_core::PlatformId;
use besluitbron_core::cache::CacheKey;
use rmcp::schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::connectors::ask::AskArg;
use crate::connectors::ids::IdForm;
use crate::connectors::page_spec::PageSpec;
use crate::connectors::{Offers, Sample};
use crate::platforms::koop::zoekservice::RegulationCollection;

/// A record of collection `C`.
pub type Record<C> = <<C as Collection>::Platform as RegulationCollection>::Record;

/// A search of collection `C`.
pub type Search<C> = <<C as Collection>::Platform as RegulationCollection>::Search;

/// One regulation collection, as its connector declares it: what is its own.
pub trait Collection: Sized + Send + Sync + 'static {
    /// Its client's part: its record, its search, its files.
    type Platform: RegulationCollection;
    /// Its search tool's arguments (declared with
    /// [`regulation_search_args!`](crate::regulation_search_args)).
    type SearchArgs: SearchArguments;
    /// What its reading shows beyond the family's fields (flattened into them).
    type Shown: Serialize + JsonSchema + Send + Sync + 'static;

    /// What it says.
    const SPEC: CollectionSpec;
    /// Its search's arguments whose value may name several things.
    const ASKS: &'static [AskArg] = &[];

    /// The search `args` ask as in force on `day`, and what it asks in words (the parts
    /// before the day, e.g. ``words `parkeren` ``); or the tool's error message.
    fn search(args: &Self::SearchArgs, day: &str) -> Result<(Search<Self>, Vec<String>), String>;
    /// What `record` says of its version, in the family's words.
    fn version(record: &Record<Self>) -> Version;
    /// What `id` asks, when it is one of the forms it reads (an id, a link, with the day
    /// and the article asked where the form says them).
    fn asked(id: &str) -> Option<Asked>;
    /// The key `record`'s file is kept under.
    fn file_key(record: &Record<Self>) -> CacheKey;
    /// The tool's error for a version its record lists without its file.
    fn without_file(version: &Version, day: &str) -> String;
    /// What the record says beyond the version, said after it (`None`: nothing).
    fn about(_record: &Record<Self>) -> Option<String> {
        None
    }
    /// What its reading shows beyond the family's fields.
    fn shown(record: &Record<Self>, day: Option<&str>) -> Self::Shown;

    /// Its platform.
    const PLATFORM: PlatformId = <Self::Platform as RegulationCollection>::PLATFORM;
}

/// What a collection says: its tools, its answers, its ids, its offers.
#[derive(Debug)]
pub struct CollectionSpec {
    /// What an assistant is told about its tools in the server's instructions (short:
    /// every address's instructions stay within the hosts' limit).
    pub instructions: &'static str,
    /// What an assistant is told about its tools in depth (the guide resource).
    pub guide: &'static str,
    /// Its search tool.
    pub search: ToolWords,
    /// Its reading tool.
    pub read: ToolWords,
    /// What its reading's arguments mean to it.
    pub read_args: ReadWords,
    /// Its answers' words.
    pub words: Words,
    /// The forms of id and link it reads, the bare ids first.
    pub forms: &'static [IdForm],
    /// One sample call of each tool, answerable by its fake.
    pub samples: &'static [Sample],
    /// Its resources, templates and prompts.
    pub offers: &'static Offers,
    /// Its part in the search page.
    pub page: &'static PageSpec,
}

/// A tool's name and what `tools/list` says of it.
#[derive(Debug)]
pub struct ToolWords {
    /// Its name, unique over every connector.
    pub name: &'static str,
    /// Its title.
    pub title: &'static str,
    /// Its description.
    pub description: &'static str,
}

/// What a reading's arguments mean to a collection (their schemas' descriptions).
#[derive(Debug)]
pub struct ReadWords {
    /// `id`.
    pub id: &'static str,
    /// `date`.
    pub date: &'static str,
    /// `article`.
    pub article: &'static str,
}

/// How a collection's answers speak of it and its regulations.
#[derive(Debug)]
pub struct Words {
    /// The collection as a sentence starts with it: `The Basiswettenbestand`.
    pub the_collection: &'static str,
    /// One of its regulations: `regulation`, `local regulation`.
    pub one: &'static str,
    /// Several: `regulations`, `local regulations`.
    pub many: &'static str,
    /// What a search that found nothing can do instead (a sentence).
    pub widen: &'static str,
    /// What a search must give when it asks nothing (after "give").
    pub give: &'static str,
    /// What an id is, said to a reading given something else (after "is not").
    pub not_an_id: &'static str,
    /// How the start of a version is said: `valid from`, `in force from`.
    pub version_from: &'static str,
    /// The end a record writes for a version without one (`9999-12-31`), if any.
    pub open_end: Option<&'static str>,
    /// How a version without articles is said (`None`: as `0 articles`).
    pub no_articles: Option<&'static str>,
}

impl Words {
    /// A version's end as said: none when the record writes none or its open end.
    pub fn end<'a>(&self, until: Option<&'a str>) -> Option<&'a str> {
        until.filter(|u| Some(*u) != self.open_end)
    }
}

/// What a record says of its version, in the family's words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version {
    /// The id its reading takes.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its kind, in the collection's words.
    pub kind: Option<String>,
    /// The organisation that set it.
    pub organization: Option<String>,
    /// The day this version came into force.
    pub from: Option<String>,
    /// The day it ends, as the record writes it.
    pub until: Option<String>,
    /// Its page for people.
    pub url: String,
}

/// What every collection's search arguments give the family: the day in force asked and
/// the page (declared with
/// [`regulation_search_args!`](crate::regulation_search_args)).
pub trait SearchArguments: DeserializeOwned + JsonSchema + Send + 'static {
    /// `date`: in force on this day (default today).
    fn date(&self) -> Option<&str>;
    /// `limit`: records per page.
    fn limit(&self) -> Option<u32>;
    /// `offset`: the first record, from `next_offset`.
    fn offset(&self) -> Option<u32>;
}

/// A regulation an id asks: its id, and the day and article the id's form says.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Asked {
    /// The id, in the collection's canonical form.
    pub id: String,
    /// The day in force, YYYY-MM-DD.
    pub date: Option<String>,
    /// One article's number.
    pub article: Option<String>,
}
