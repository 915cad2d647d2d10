//! What `bwb` offers besides its tools: a regulation by its BWB id as a resource
//! template (the id may carry a day and an article, as `fetch` reads it).

use crate::connectors::offers::{Offers, Shape, TemplateOffer};

/// The offers of `bwb`.
pub const OFFERS: Offers = Offers {
    resources: &[],
    templates: &[TemplateOffer {
        uri_template: "besluitbron://bwb/regulation/{id}",
        name: "bwb-regulation",
        title: "Basiswettenbestand: regeling",
        description: "One national regulation as in force today by its BWB id (e.g. BWBR0018451 from bwb_search; \
                      BWBR0018451@2025-06-01 for a day, BWBR0018451#2 for one article), with the first page of \
                      its text, as bwb_read gives it; bwb_read reads on with `offset`.",
        tool: "bwb_read",
        shape: Shape::Text,
        values: None,
    }],
    prompts: &[],
};
