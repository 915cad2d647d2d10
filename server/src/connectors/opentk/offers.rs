//! What `opentk` offers besides its tools: a document by its number as a resource
//! template.

use crate::connectors::offers::{Offers, Shape, TemplateOffer};

/// The offers of `opentk`.
pub const OFFERS: Offers = Offers {
    resources: &[],
    templates: &[TemplateOffer {
        uri_template: "besluitbron://opentk/document/{id}",
        name: "opentk-document",
        title: "OpenTK: document",
        description: "One parliamentary document from OpenTK by its number (e.g. 2026D10001 from opentk_search), \
                      as opentk_document gives it.",
        tool: "opentk_document",
        shape: Shape::Text,
        values: None,
    }],
    prompts: &[],
};
