//! What a fake is to the registry: [`FakePlatform`], the one type each fake module
//! declares (called `Fake`) with its own settings and its routes. The registry
//! (`registry.rs`) names that type in the fake's line and does the rest.
//!
//! It lives below the fakes and the registry both, so a fake implements it without
//! importing the registry that serves it: the registry sits at the top, the fakes below
//! it, and what they share below them.
//!
//! Invariants: a fake's routes get its own settings typed as the type it declares here
//! ([`FakePlatform::Own`]), so the compiler keeps the registry line and the fake in
//! agreement.
//!
//! What this module does not do: list the fakes, serve one, or know any fake.

use axum::Router;

use crate::own::OwnSettings;
use crate::shared::Shared;

/// One fake platform's code, as its registry line names it: the settings it has of its
/// own and its routes. Each fake module has one such type, called `Fake`.
pub(crate) trait FakePlatform {
    /// What this fake can be set to do beyond [`FakeConfig`](crate::FakeConfig), declared
    /// in its module (`()`: nothing); the default is the healthy real platform.
    type Own: OwnSettings;

    /// The folders of the corpus of real files it serves (`bwb`, `tk/vlos`), read and
    /// checked when it starts: without them it does not start.
    const CORPUS: &'static [&'static str] = &[];

    /// The fake's routes over its shared state, to be served at the root or nested under
    /// a prefix; `base_url` is the URL its clients are given.
    fn router(shared: Shared<Self::Own>, base_url: String) -> Router;
}
