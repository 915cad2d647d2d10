//! What `cvdr` offers besides its tools: a local regulation by its CVDR id as a resource
//! template (with or without its version, and an article, as `fetch` reads it).

use crate::connectors::offers::{Offers, Shape, TemplateOffer};

/// The offers of `cvdr`.
pub const OFFERS: Offers = Offers {
    resources: &[],
    templates: &[TemplateOffer {
        uri_template: "besluitbron://cvdr/regulation/{id}",
        name: "cvdr-regulation",
        title: "Lokale regelgeving: regeling",
        description: "One local regulation by its CVDR id (e.g. CVDR100394_2 from cvdr_search, that version; \
                      CVDR100394, the one in force today; CVDR100394_2#3 for one article), with the first page \
                      of its text, as cvdr_read gives it; cvdr_read reads on with `offset`.",
        tool: "cvdr_read",
        shape: Shape::Text,
        values: None,
    }],
    prompts: &[],
};
