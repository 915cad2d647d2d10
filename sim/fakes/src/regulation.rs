//! KOOP's regulation collections as their fakes serve them, written once (the
//! Basiswettenbestand `bwb`, local regulations `cvdr`): each a collection of KOOP's
//! zoekservice (SRU 1.2 with its `x-connection`, the service written once in `sru.rs`),
//! and its versions' files under `/{platform}/{a}/{b}/xml/{file}`. A collection's fake is
//! a [`RegulationFake`] and keeps only what is its own: its regulations, its CQL and which
//! versions match, how a record is written, and which file a path names; [`Fake`] is the
//! rest — the fake's routes, its settings (the service's own trouble), its corpus — and
//! [`article_xml`] writes an article as both collections' files do.
//!
//! Invariants:
//! - The envelope, the request's checks, the refusals and the service's trouble are the
//!   shared SRU service's; a collection's own refusals are its CQL's (an index it does not
//!   know `1/16`, a clause it cannot parse `1/10`).
//! - A file is served only as its collection names it: a real version's file byte for
//!   byte, a generated version's XML written from its articles; any other path is the
//!   repository's 404 page.
//!
//! What this module does not do: hold a regulation, read a query, or know a collection.

use std::borrow::Cow;
use std::marker::PhantomData;

use axum::Router;
use axum::body::Body;
use axum::extract::Path;
use axum::http::{Response, StatusCode};
use axum::routing::get;
use besluitbron_core::PlatformId;

use crate::fake::FakePlatform;
use crate::faults::FaultReplies;
use crate::raw_response;
use crate::shared::Shared;
use crate::sru::{
    self, Found, Refusal, SruCollection, SruDiagnostic, SruService, Trouble, ZoekserviceSettings, escape,
};

/// The search's path under a collection's fake's root (as on `zoekservice.overheid.nl`).
pub const SRU_PATH: &str = "/sru/Search";

/// One regulation collection's fake: what is its own.
pub(crate) trait RegulationFake: 'static {
    /// A version found, as its record is written.
    type Hit: Clone + Send + Sync + 'static;
    /// Its platform (its id names its corpus folder and its files' folder).
    const PLATFORM: PlatformId;
    /// Its `x-connection` on the service.
    const CONNECTION: &'static str;
    /// A version's record (its `gzd`); `root` is the fake's root URL, for its links.
    fn record(root: &str, hit: &Self::Hit) -> String;
    /// Every version `query` selects, in the service's order, or the service's refusal of
    /// its CQL.
    fn find(query: &str) -> Result<Vec<Self::Hit>, SruDiagnostic>;
    /// The file at `/{platform}/{a}/{b}/xml/{file}`, when it is one of a version's.
    fn file(a: &str, b: &str, file: &str) -> Option<Cow<'static, [u8]>>;
}

/// Collection `C`'s fake, as its registry line names it.
pub(crate) struct Fake<C>(PhantomData<C>);

impl<C: RegulationFake> FakePlatform for Fake<C> {
    const CORPUS: &'static [&'static str] = &[C::PLATFORM.as_str()];

    type Own = ZoekserviceSettings;

    fn router(shared: Shared<ZoekserviceSettings>, base_url: String) -> Router {
        let files = format!("/{}/{{a}}/{{b}}/xml/{{file}}", C::PLATFORM.as_str());
        sru::router::<Fake<C>>(shared, base_url, &files, get(file::<C>))
    }
}

static REPLIES: FaultReplies<ZoekserviceSettings> = sru::replies();

/// KOOP's zoekservice as the collection's `x-connection` answers: SRU 1.2 only. A query
/// read is the versions it selects (the collection reads and matches it in one step).
impl<C: RegulationFake> SruCollection for Fake<C> {
    type Own = ZoekserviceSettings;
    type Query = Vec<C::Hit>;
    type Hit = C::Hit;

    const SERVICE: SruService = SruService::zoekservice(C::CONNECTION);
    const SEARCH_PATH: &'static str = SRU_PATH;

    fn replies() -> &'static FaultReplies<ZoekserviceSettings> {
        &REPLIES
    }

    fn trouble(own: &ZoekserviceSettings) -> Trouble {
        own.trouble()
    }

    fn parse(query: &str) -> Result<Vec<C::Hit>, Refusal> {
        Ok(C::find(query)?)
    }

    fn find(hits: &Vec<C::Hit>) -> Found<C::Hit> {
        Found::hits(hits.clone())
    }

    fn record(root: &str, hit: &C::Hit) -> String {
        C::record(root, hit)
    }
}

/// A version's file: a real one's as it is, a generated one's XML.
async fn file<C: RegulationFake>(Path((a, b, file)): Path<(String, String, String)>) -> Response<Body> {
    match C::file(&a, &b, &file) {
        Some(bytes) => raw_response(StatusCode::OK, "application/xml", bytes),
        None => sru::not_found(),
    }
}

/// How a collection's XML numbers an article's paragraphs when it has more than one.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Numbered {
    /// Each a `lid` with its `lidnr` (the Basiswettenbestand).
    Leden,
    /// An explicit list, each item `1.`, `2.` (the CVDR).
    List,
}

/// An article as a collection's file writes it: its heading (`Artikel`, its number and
/// title), then its one paragraph, or its paragraphs numbered as the collection does.
pub(crate) fn article_xml(number: &str, title: Option<&str>, paragraphs: &[&str], numbered: Numbered) -> String {
    let mut out = format!(
        "<artikel><kop><label>Artikel</label><nr>{number}</nr>{}</kop>",
        title
            .map(|t| format!("<titel>{}</titel>", escape(t)))
            .unwrap_or_default()
    );
    match (paragraphs, numbered) {
        ([one], _) => out.push_str(&format!("<al>{}</al>", escape(one))),
        (_, Numbered::Leden) => {
            for (i, p) in paragraphs.iter().enumerate() {
                out.push_str(&format!("<lid><lidnr>{}</lidnr><al>{}</al></lid>", i + 1, escape(p)));
            }
        }
        (_, Numbered::List) => {
            out.push_str("<lijst type=\"expliciet\">");
            for (i, p) in paragraphs.iter().enumerate() {
                out.push_str(&format!("<li nr=\"{}.\"><al>{}</al></li>", i + 1, escape(p)));
            }
            out.push_str("</lijst>");
        }
    }
    out.push_str("</artikel>");
    out
}

/// `text` made `'static`, once per process: a real regulation's words live as long as the
/// corpus is held, and the fakes' regulations are `'static` data.
pub(crate) fn leak(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}
