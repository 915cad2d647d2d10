//! What `obv` offers besides its tools: the sources as a resource, a document by id as
//! a resource template, the council-decision prompt, and the completion of organisation
//! keys from the sources list (fetched with `obv_sources`'s own call).

use super::lists::sources_call;
use crate::call::{Call, Context, Who};
use crate::connectors::offers::{
    Choice, ChoicesFuture, Offers, PromptArg, PromptArgs, PromptOffer, ResourceOffer, Shape, TemplateOffer, Values,
};
use crate::platforms::obv::{ObvClient, PLATFORM};

/// The offers of `obv`.
pub const OFFERS: Offers = Offers {
    resources: &[ResourceOffer {
        uri: "besluitbron://obv/sources",
        name: "obv-sources",
        title: "OpenBesluitvorming: bronnen",
        description: "OpenBesluitvorming's sources (municipalities, provinces, water boards) with the key to pass \
                      as `organization` to obv_search: the first 100 of the list, with its `total` and `next_offset`; \
                      obv_sources pages on (`offset`) and narrows it (`name`, `organization_type`).",
        tool: "obv_sources",
        arguments: r#"{"limit": 100}"#,
        shape: Shape::Json,
    }],
    templates: &[TemplateOffer {
        uri_template: "besluitbron://obv/document/{id}",
        name: "obv-document",
        title: "OpenBesluitvorming: document",
        description: "One OpenBesluitvorming record (meeting, document, motion) by the `id` obv_search gives, with \
                      the first page of its text; obv_document reads on with `offset`.",
        tool: "obv_document",
        shape: Shape::Text,
        values: None,
    }],
    prompts: &[PromptOffer {
        name: "gemeenteraad_besluit",
        title: "Wat besloot de gemeenteraad over …?",
        description: "What did a council (municipality, province or water board) decide about a subject? A plan \
                      that searches the organisation's council records first and reads only the decisive ones.",
        arguments: &[
            PromptArg {
                name: "organization",
                description: "De organisatie: een sleutel uit obv_sources (bv. gemeente-utrecht) of haar naam (Gemeente Utrecht)",
                required: true,
                values: Some(ORGANIZATIONS),
            },
            PromptArg {
                name: "onderwerp",
                description: "Het onderwerp, bv. woningbouw",
                required: true,
                values: None,
            },
            PromptArg {
                name: "sinds",
                description: "Alleen vanaf deze dag, JJJJ-MM-DD (optioneel)",
                required: false,
                values: None,
            },
        ],
        plan: council_plan,
    }],
};

/// OpenBesluitvorming's organisation keys, with their names.
pub const ORGANIZATIONS: Values = Values::Fetched {
    tool: "obv_sources",
    fetch: organizations,
};

fn organizations<'a>(ctx: &'a Context, call: &'a Call) -> ChoicesFuture<'a> {
    Box::pin(async move {
        let client = ctx.clients.get::<ObvClient>(PLATFORM)?;
        let (answer, _) = ctx.fetch(Who::Caller, call, sources_call(client)).await?;
        Ok(answer
            .sources
            .iter()
            .map(|s| Choice {
                value: s.key.clone(),
                label: s.label.clone(),
            })
            .collect())
    })
}

fn council_plan(args: &PromptArgs) -> String {
    let organization = args.required("organization");
    let subject = args.required("onderwerp");
    let (since, date_from) = match args.get("sinds") {
        Some(day) => (format!(" sinds {day}"), format!(", date_from \"{day}\"")),
        None => (String::new(), String::new()),
    };
    format!(
        "Onderzoeksvraag: wat besloot {organization} over \"{subject}\"{since}?\n\n\
         Werk zo, de goedkope stappen eerst:\n\
         1. obv_search met query \"{subject}\", organization \"{organization}\"{date_from} en limit 10: titels, \
         datums en soorten van de raadsstukken. Eén zoekvraag binnen één organisatie is goedkoop.\n\
         2. Te veel treffers: beperk met entity_type (Motion voor moties, Document voor raadsvoorstellen en \
         besluitenlijsten) of een kortere periode. Te weinig: een synoniem of een ruimere term; een onbekende \
         sleutel: zoek de juiste in obv_sources.\n\
         3. Lees met obv_document alleen de twee of drie stukken die het besluit dragen (raadsbesluit, aangenomen \
         motie, besluitenlijst); een lange tekst lees je verder met offset en length.\n\
         4. Antwoord met wat er besloten is en wanneer, en noem bij elke bewering het stuk (titel, datum, id).\n\
         Vind je niets, zeg dan wat je zocht en hoe je verbreedde; verzin geen besluiten."
    )
}
