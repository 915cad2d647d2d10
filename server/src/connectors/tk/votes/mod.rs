//! `tk_votes`: how the Tweede Kamer voted on a motion, amendment or bill — by its case
//! number, or on the cases found by words in their title or subject.
//!
//! Each request is its own platform call through the one path, admitted and counted as
//! it is asked for (R-L8), one unit each: the cases with their decisions
//! (`Zaak?$expand=Besluit`), then the votes cast on the decisions that were put to the
//! vote (`Stemming?$filter=Besluit_Id eq …`), page after page as the platform links them
//! (at most [`MAX_VOTE_PAGES`](crate::platforms::tk::MAX_VOTE_PAGES)).
//! One result per decision, so a case voted twice (a re-vote, an amended motion) gives
//! two: the decision (`BesluitSoort`, `BesluitTekst`), how it was voted (show of hands or
//! roll call), per faction `Voor`/`Tegen`/`Niet deelgenomen` with its seats, the totals,
//! each member's vote in a roll call, and a vote cast by mistake (`Vergissing`) flagged —
//! the Kamer counts it as cast, and so does the tally.
//!
//! What is kept, each request's answer on its own: when every voted decision it concerns
//! is final (`Status` `Besluit`), as a reference answer (a month); else ten minutes, so a
//! later vote is seen.
//!
//! Its rooms: the arguments and what they ask (`args.rs`), what a decision's words say
//! (`decisions.rs`), the fetch of cases and votes (`fetch.rs`), one decision's result
//! (`result.rs`) and the rendering (`render.rs`). This file holds the tool, which runs
//! them in that order.

mod args;
mod decisions;
mod fetch;
mod render;
mod result;

use std::sync::Arc;

use crate::call::{Call, Context, Head, Read, ReadResult, Reply, replied, tool_error};
use crate::connectors::tool::ToolSpec;
use crate::platforms::tk::{PLATFORM, TkClient};

pub(super) use args::VotesArgs;
use result::VotesShown;

/// The tool.
pub(super) const TOOL: ToolSpec = crate::tool! {
    name: "tk_votes",
    title: "Tweede Kamer votes",
    description: "How the Tweede Kamer voted on a motion, amendment or bill, by case number (`id`) or `query` words: \
                  per decision (a re-vote gives two) adopted or rejected, show of hands or roll call, per faction \
                  Voor/Tegen/Niet deelgenomen with seats, totals, each member's vote in a roll call, a vote cast by \
                  mistake (`Vergissing`) flagged. Final decisions: a month in the buffer.",
    arguments: VotesArgs,
    output: VotesShown,
    run: tk_votes,
    read: votes_read,
};

/// The votes on a case, or on the cases found by words.
pub(super) async fn tk_votes(ctx: &Context, call: &Call, args: VotesArgs) -> Reply {
    replied(votes_read(ctx, call, args).await)
}

/// The votes read, typed (`tk_votes`'s answer, and `fetch`'s for a case number): the
/// head is the first case shown, its subject and its page on tweedekamer.nl.
pub(super) async fn votes_read(ctx: &Context, call: &Call, args: VotesArgs) -> ReadResult {
    let asked = args::Asked::of(&args).map_err(|message| Reply::from(tool_error(message)))?;
    let client = ctx.clients.get::<TkClient>(PLATFORM)?;
    let key = asked.key();
    let searched = asked.describe();
    let asked = Arc::new(asked);
    let (answer, served) = fetch::fetch(ctx, call, &client, key, &asked).await?;
    let head = head(&answer, &asked);
    Ok(Read::own(PLATFORM, head, render::render(&answer, served, &searched)))
}

/// The case a person asked for: the first case shown (its subject, its page on
/// tweedekamer.nl), else the case number asked, or the words.
fn head(answer: &fetch::VotesAnswer, asked: &args::Asked) -> Head {
    match answer.cases.first() {
        Some(c) => {
            let number = c.case.nummer.as_deref().unwrap_or_default();
            let title = c.case.onderwerp.clone().or_else(|| c.case.titel.clone());
            Head::new(
                title.unwrap_or_else(|| format!("Tweede Kamer case {number}")),
                super::ids::case_page(number).or_else(|| c.url.clone()),
            )
        }
        None => {
            let page = match asked {
                args::Asked::Case(number) => super::ids::case_page(number),
                args::Asked::Words { .. } => None,
            };
            Head::new(format!("Votes of the Tweede Kamer on {}", asked.describe()), page)
        }
    }
}
