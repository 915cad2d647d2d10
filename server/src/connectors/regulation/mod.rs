//! The connectors of KOOP's regulation collections (the Basiswettenbestand `bwb`, local
//! regulations `cvdr`), written once: a search tool and a reading tool over a
//! [`Collection`], the small part each collection keeps as its own (vector's shape: a
//! family of platforms behind one service shares its reader, each member holds only what
//! is its own), as [`crate::platforms::koop::zoekservice`] is for their client.
//!
//! A collection's own part is what it says ([`CollectionSpec`]: its tools' words, its
//! answers' words, its id forms, samples and offers) and a few functions of its record
//! and arguments: the search its arguments ask, what its record says of a version in the
//! family's words ([`Version`]), the id forms it reads, the key its files are kept under,
//! and what its reading shows beyond the family's fields. The rest is here: the search
//! tool and its part in `search` on `/mcp` ([`search`]), the reading tool and its part in
//! `fetch` ([`read`]), the arguments every collection takes ([`args`]), one regulation's
//! text as an assistant reads it ([`text`]), and the connector's registry entry
//! ([`connector`]).
//!
//! Invariants:
//! - Two platform calls for a reading, each through the one path: the version's record on
//!   KOOP's zoekservice (kept ten minutes when asked as in force on a day, since a new
//!   version can be published for today; for weeks when a versioned id names it), then
//!   its file on KOOP's repository host (kept for weeks under the version, so a newer
//!   version is read anew). One call for a search, kept ten minutes.
//! - Every collection's answers have the family's shape: a search lists [`search::Hit`]s
//!   in the shared vocabulary with an exact tally; a reading says the version in a line,
//!   what its record adds, then a page of the text asked.
//!
//! What this module does not do: name a collection, build a query, or read a record's
//! fields (each collection does).

pub mod args;
pub mod collection;
pub mod read;
pub mod search;
pub mod text;

use std::marker::PhantomData;
use std::sync::Arc;

use super::search::KeywordSearch;
use super::tool::ToolSpec;
use super::{ConnectorSpec, http_config};
use crate::call::Client;
use crate::config::{Config, PlatformDefaults};
use crate::platforms::http::PlatformError;
use crate::platforms::koop::zoekservice::RegulationClient;
use crate::platforms::koop::{REPOSITORY, ZOEKSERVICE};
pub use args::{MAX_LIMIT, ReadArgs, date_arg, read_length};
pub use collection::{
    Asked, Collection, CollectionSpec, ReadWords, Record, Search, SearchArguments, ToolWords, Version, Words,
};
pub use read::ReadShown;
pub use text::{OutlineEntry, RegulationPage, outline, regulation_page};

/// Collection `C`'s tools, as its registry entry lists them.
struct Tools<C>(PhantomData<C>);

impl<C: Collection> Tools<C> {
    /// The search, then the reading.
    const ALL: &'static [ToolSpec] = &[search::tool::<C>(), read::tool::<C>()];
}

/// The address of KOOP's zoekservice, where every collection is searched.
const ZOEKSERVICE_URL: &str = "https://zoekservice.overheid.nl/sru/Search";

/// The connector of collection `C`: its registry entry.
pub const fn connector<C: Collection>() -> ConnectorSpec {
    ConnectorSpec {
        id: C::PLATFORM.as_str(),
        platform: C::PLATFORM,
        defaults: PlatformDefaults::new(C::PLATFORM, ZOEKSERVICE_URL, &[ZOEKSERVICE, REPOSITORY]),
        instructions: C::SPEC.instructions,
        guide: C::SPEC.guide,
        reads: Some(read::ReadTool::<C>::READER),
        lists: &[],
        tools: Tools::<C>::ALL,
        open: open::<C>,
        maintenance: None,
        samples: C::SPEC.samples,
        offers: C::SPEC.offers,
        page: C::SPEC.page,
        status: None,
        search: KeywordSearch::Tool(search::SearchTool::<C>::KEYWORDS),
    }
}

/// Opens collection `C`'s client from configuration.
fn open<C: Collection>(config: &Config) -> Result<Client, PlatformError> {
    let client = RegulationClient::<C::Platform>::new(
        &config.platform(C::PLATFORM).base_url,
        &http_config(config, C::PLATFORM),
    )?;
    Ok(Arc::new(client))
}
