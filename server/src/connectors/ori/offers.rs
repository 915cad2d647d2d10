//! What `ori` offers besides its tools: its sources as a resource (ORI is retired; the
//! read says so, as `ori_sources` does, unless a mirror is configured).

use crate::connectors::offers::{Offers, ResourceOffer, Shape};

/// The offers of `ori`.
pub const OFFERS: Offers = Offers {
    resources: &[ResourceOffer {
        uri: "besluitbron://ori/sources",
        name: "ori-sources",
        title: "Open Raadsinformatie: bronnen (opgeheven)",
        description: "Open Raadsinformatie's sources, as ori_sources gives them. ORI was retired on 1 November \
                      2026: unless BesluitBron's operator runs it against a mirror, reading this is an error that \
                      points to besluitbron://obv/sources.",
        tool: "ori_sources",
        arguments: r#"{"limit": 500}"#,
        shape: Shape::Json,
    }],
    templates: &[],
    prompts: &[],
};
