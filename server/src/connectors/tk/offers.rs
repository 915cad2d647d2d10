//! What `tk` offers besides its tools: the factions and committees as resources, a
//! document's text as a resource template, the "follow a dossier" prompt, and the
//! completion of faction and committee names from those lists (fetched with the tools'
//! own calls).

use super::lists::{committees_call, factions_call};
use crate::call::{Call, Context, Who};
use crate::connectors::offers::{
    Choice, ChoicesFuture, Offers, PromptArg, PromptArgs, PromptOffer, ResourceOffer, Shape, TemplateOffer, Values,
};
use crate::platforms::tk::{PLATFORM, TkClient};

/// The offers of `tk`.
pub const OFFERS: Offers = Offers {
    resources: &[
        ResourceOffer {
            uri: "besluitbron://tk/factions",
            name: "tk-factions",
            title: "Tweede Kamer: fracties",
            description: "The current factions of the Tweede Kamer with abbreviations and seats, as tk_factions \
                          gives them.",
            tool: "tk_factions",
            arguments: "{}",
            shape: Shape::Json,
        },
        ResourceOffer {
            uri: "besluitbron://tk/committees",
            name: "tk-committees",
            title: "Tweede Kamer: commissies",
            description: "The committees of the Tweede Kamer (standing and temporary): the first 100, with the \
                          `total`; tk_committees pages on (`offset`) and finds one by `name`.",
            tool: "tk_committees",
            arguments: r#"{"limit": 100}"#,
            shape: Shape::Json,
        },
    ],
    templates: &[TemplateOffer {
        uri_template: "besluitbron://tk/document/{id}",
        name: "tk-document",
        title: "Tweede Kamer: documenttekst",
        description: "The text of one Tweede Kamer document by its number (2021D02426) or the `id` tk_search gives, as \
                      tk_document_text gives it: the first page; tk_document_text reads on with `offset`. \
                      Expensive the first time (the file is fetched and read), then kept.",
        tool: "tk_document_text",
        shape: Shape::Text,
        values: None,
    }],
    prompts: &[PromptOffer {
        name: "volg_kamerdossier",
        title: "Volg een Kamerdossier",
        description: "Follow a parliamentary subject in the Tweede Kamer: its cases, letters, motions and \
                      questions, newest first, optionally of one committee or faction. A plan that lists titles \
                      first and reads only the decisive documents.",
        arguments: &[
            PromptArg {
                name: "onderwerp",
                description: "Woorden uit de titel of het onderwerp, bv. stikstof",
                required: true,
                values: None,
            },
            PromptArg {
                name: "commissie",
                description: "De commissie die het dossier behandelt (optioneel; naam uit tk_committees)",
                required: false,
                values: Some(COMMITTEES),
            },
            PromptArg {
                name: "fractie",
                description: "Let vooral op deze fractie (optioneel; afkorting uit tk_factions)",
                required: false,
                values: Some(FACTIONS),
            },
        ],
        plan: dossier_plan,
    }],
};

/// The factions' abbreviations, with their names.
pub const FACTIONS: Values = Values::Fetched {
    tool: "tk_factions",
    fetch: factions,
};

/// The committees' names, with their abbreviations.
pub const COMMITTEES: Values = Values::Fetched {
    tool: "tk_committees",
    fetch: committees,
};

fn factions<'a>(ctx: &'a Context, call: &'a Call) -> ChoicesFuture<'a> {
    Box::pin(async move {
        let client = ctx.clients.get::<TkClient>(PLATFORM)?;
        let (answer, _) = ctx.fetch(Who::Caller, call, factions_call(client)).await?;
        Ok(answer
            .factions
            .iter()
            .filter_map(|f| {
                let value = f.afkorting.clone().or_else(|| f.naam_nl.clone())?;
                Some(Choice {
                    value,
                    label: f.naam_nl.clone().unwrap_or_default(),
                })
            })
            .collect())
    })
}

fn committees<'a>(ctx: &'a Context, call: &'a Call) -> ChoicesFuture<'a> {
    Box::pin(async move {
        let client = ctx.clients.get::<TkClient>(PLATFORM)?;
        let (answer, _) = ctx.fetch(Who::Caller, call, committees_call(client)).await?;
        Ok(answer
            .committees
            .iter()
            .filter(|c| !c.verwijderd)
            .filter_map(|c| {
                Some(Choice {
                    value: c.naam.clone()?,
                    label: c.afkorting.clone().unwrap_or_default(),
                })
            })
            .collect())
    })
}

fn dossier_plan(args: &PromptArgs) -> String {
    let subject = args.required("onderwerp");
    let mut focus = String::new();
    if let Some(committee) = args.get("commissie") {
        focus.push_str(&format!(" (behandeld door de {committee})"));
    }
    if let Some(faction) = args.get("fractie") {
        focus.push_str(&format!(", met aandacht voor {faction}"));
    }
    format!(
        "Onderzoeksvraag: volg het Kamerdossier over \"{subject}\"{focus}.\n\n\
         Werk zo, de goedkope stappen eerst:\n\
         1. tk_search met query \"{subject}\" en kind \"cases\": de zaken (Kamerstukdossiers, moties, vragen), \
         nieuwste eerst. Eén zoekvraag is goedkoop; tk_search zoekt in titels en onderwerpen, niet in de tekst.\n\
         2. tk_search met query \"{subject}\" (documenten), eventueel met soort (Motie, Brief regering, \
         Schriftelijke vragen) of date_from om te beperken; met offset (next_offset uit het antwoord) de \
         volgende pagina. tk_search filtert niet op commissie of fractie: let daarop in de titels en metadata.\n\
         3. tk_document geeft de metadata van een stuk (goedkoop); lees met tk_document_text alleen de paar \
         stukken die ertoe doen (kabinetsbrief, aangenomen motie) — de eerste keer duur, daarna bewaard.\n\
         4. Vat samen: het verloop in de tijd, wie wat indiende of steunde, en noem bij elke bewering het stuk \
         (soort, nummer, datum).\n\
         Vind je niets, zeg dan welke woorden je zocht en probeer kortere of andere woorden; verzin geen stukken."
    )
}
