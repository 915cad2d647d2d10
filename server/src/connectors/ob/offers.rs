//! What `ob` offers besides its tools: a publication by id as a resource template, the
//! "find the official publication" prompt, and the completion of journals and
//! organisation types (fixed lists: the platform has no list to fetch).

use crate::connectors::offers::{
    Choice, Offers, PromptArg, PromptArgs, PromptOffer, Shape, TemplateOffer, Values, plain_choices,
};
use crate::platforms::ob::Publication;

/// The offers of `ob`.
pub const OFFERS: Offers = Offers {
    resources: &[],
    templates: &[TemplateOffer {
        uri_template: "besluitbron://ob/publication/{id}",
        name: "ob-publication",
        title: "Officiële Bekendmakingen: publicatie",
        description: "One official publication by its id (e.g. gmb-2026-10000 from ob_search) with the first \
                      page of its text, as ob_document gives it; ob_document reads on with `offset`.",
        tool: "ob_document",
        shape: Shape::Text,
        values: None,
    }],
    prompts: &[PromptOffer {
        name: "officiele_bekendmaking",
        title: "Zoek de officiële bekendmaking van een besluit",
        description: "Find the official publication (Gemeenteblad, Staatscourant, …) that made a decision law: a \
                      plan that searches with the journal and organisation filters first and reads one \
                      publication's text last.",
        arguments: &[
            PromptArg {
                name: "onderwerp",
                description: "Waar het besluit over gaat, bv. omgevingsvisie",
                required: true,
                values: None,
            },
            PromptArg {
                name: "organisatie",
                description: "De organisatie die besloot (optioneel), bv. Utrecht",
                required: false,
                values: None,
            },
            PromptArg {
                name: "publicatie",
                description: "Het publicatieblad (optioneel), bv. Gemeenteblad",
                required: false,
                values: Some(PUBLICATIONS),
            },
            PromptArg {
                name: "organisatietype",
                description: "Het soort organisatie (optioneel), bv. gemeente",
                required: false,
                values: Some(ORGANIZATION_TYPES),
            },
        ],
        plan: publication_plan,
    }],
};

/// The journals, as `ob_search`'s `publication` takes them.
pub const PUBLICATIONS: Values = Values::Fixed(publications);

/// The organisation types, as `ob_search`'s `organization_type` takes them.
pub const ORGANIZATION_TYPES: Values = Values::Fixed(organization_types);

fn publications() -> Vec<Choice> {
    let names: Vec<&str> = Publication::ALL.iter().map(|p| p.as_str()).collect();
    plain_choices(&names)
}

fn organization_types() -> Vec<Choice> {
    plain_choices(&[
        "gemeente",
        "provincie",
        "waterschap",
        "ministerie",
        "staten generaal",
        "zelfstandig bestuursorgaan",
        "regionaal samenwerkingsorgaan",
    ])
}

fn publication_plan(args: &PromptArgs) -> String {
    let subject = args.required("onderwerp");
    let mut filters = String::new();
    for (argument, name) in [
        ("organisatie", "organization"),
        ("publicatie", "publication"),
        ("organisatietype", "organization_type"),
    ] {
        if let Some(value) = args.get(argument) {
            filters.push_str(&format!(", {name} \"{value}\""));
        }
    }
    format!(
        "Onderzoeksvraag: welke officiële bekendmaking hoort bij het besluit over \"{subject}\"?\n\n\
         Werk zo, de goedkope stappen eerst:\n\
         1. ob_search met query \"{subject}\"{filters}, sort newest en limit 10: titels, organisaties, datums en \
         ids van de publicaties. Eén zoekvraag is goedkoop.\n\
         2. Te veel: beperk met publication (bv. Gemeenteblad), organization, document_type (Besluit, \
         Verordening) of een periode (date_from, date_to). Te weinig: laat een filter weg of kies een ruimere \
         term.\n\
         3. Lees met ob_document alleen de publicatie die het besluit bekendmaakt; een lange tekst lees je verder \
         met offset en length.\n\
         4. Antwoord met de vindplaats (blad, nummer, datum, id) en wat er bekendgemaakt is.\n\
         Vind je niets, zeg dan wat je zocht en met welke filters; verzin geen vindplaats."
    )
}
