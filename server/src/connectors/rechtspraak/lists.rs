//! The value lists' calls (courts, areas of law, kinds of procedure): shared by their
//! tools, by a search that resolves names on them (`mod.rs`), and by the completion of
//! court and area names (`offers.rs`), so all read one buffered answer.
//!
//! Invariants: each list is one request of [`COST`], kept as a reference answer. What it
//! does not do: resolve a name on a list (`resolve.rs`) or render one (`render/lists.rs`).

use std::sync::Arc;

use besluitbron_core::Units;
use besluitbron_core::cache::{CacheKey, DataClass};
use besluitbron_core::path::Feedback;

use super::render::{AreasAnswer, CourtsAnswer, ProceduresAnswer};
use crate::call::PlatformCall;
use crate::platforms::rechtspraak::{PLATFORM, RsClient};

/// Every Rechtspraak read counts one call against the limit kept for it.
pub(super) const COST: Units = Units::ONE;

/// The courts' list (`instanties`).
pub(super) fn courts_call(client: &Arc<RsClient>) -> PlatformCall<CourtsAnswer> {
    let client = Arc::clone(client);
    PlatformCall::new(
        CacheKey::new(PLATFORM, DataClass::Reference, "instanties"),
        COST,
        move || {
            let client = Arc::clone(&client);
            async move {
                Ok((
                    CourtsAnswer {
                        courts: client.courts().await?,
                    },
                    Feedback::default(),
                ))
            }
        },
    )
}

/// The areas of law (`rechtsgebieden`).
pub(super) fn areas_call(client: &Arc<RsClient>) -> PlatformCall<AreasAnswer> {
    let client = Arc::clone(client);
    PlatformCall::new(
        CacheKey::new(PLATFORM, DataClass::Reference, "rechtsgebieden"),
        COST,
        move || {
            let client = Arc::clone(&client);
            async move {
                Ok((
                    AreasAnswer {
                        areas: client.areas().await?,
                    },
                    Feedback::default(),
                ))
            }
        },
    )
}

/// The kinds of procedure (`proceduresoorten`).
pub(super) fn procedures_call(client: &Arc<RsClient>) -> PlatformCall<ProceduresAnswer> {
    let client = Arc::clone(client);
    PlatformCall::new(
        CacheKey::new(PLATFORM, DataClass::Reference, "proceduresoorten"),
        COST,
        move || {
            let client = Arc::clone(&client);
            async move {
                Ok((
                    ProceduresAnswer {
                        procedures: client.procedures().await?,
                    },
                    Feedback::default(),
                ))
            }
        },
    )
}
