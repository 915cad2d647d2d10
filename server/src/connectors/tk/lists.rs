//! The reference lists' calls, the factions and the committees: shared by their tools
//! (`tk_factions`, `tk_committees`) and by the completion of their names (`offers.rs`),
//! so both read one buffered answer.
//!
//! Invariants: each list is one request of [`COST`], kept as a reference answer. What
//! it does not do: render a list (`render.rs`).

use std::sync::Arc;

use besluitbron_core::Units;
use besluitbron_core::cache::{CacheKey, DataClass};
use besluitbron_core::path::Feedback;

use super::render::{CommitteesAnswer, FactionsAnswer};
use crate::call::PlatformCall;
use crate::platforms::tk::{PLATFORM, TkClient};

/// Every Tweede Kamer read counts one call (no limit is kept, so it only matters for
/// the fairness of an operator-configured one).
pub(super) const COST: Units = Units::ONE;

/// The factions' call, shared by `tk_factions` and the completion of faction names.
pub(super) fn factions_call(client: Arc<TkClient>) -> PlatformCall<FactionsAnswer> {
    let key = CacheKey::new(PLATFORM, DataClass::Reference, "factions");
    PlatformCall::new(key, COST, move || {
        let client = Arc::clone(&client);
        async move {
            let factions = client.factions().await?;
            Ok((FactionsAnswer { factions }, Feedback::default()))
        }
    })
}

/// The committees' call, shared by `tk_committees` and the completion of committee names.
pub(super) fn committees_call(client: Arc<TkClient>) -> PlatformCall<CommitteesAnswer> {
    let key = CacheKey::new(PLATFORM, DataClass::Reference, "committees");
    PlatformCall::new(key, COST, move || {
        let client = Arc::clone(&client);
        async move {
            let committees = client.committees().await?;
            Ok((CommitteesAnswer { committees }, Feedback::default()))
        }
    })
}
