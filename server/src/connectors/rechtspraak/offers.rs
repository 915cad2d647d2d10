//! What `rechtspraak` offers besides its tools: the courts, areas of law and procedures
//! as resources, a ruling by ECLI as a resource template, the "case law since" prompt,
//! and the completion of court and area names from the value lists (fetched with the
//! tools' own calls).

use super::lists::{areas_call, courts_call, procedures_call};
use super::resolve;
use crate::call::{Call, Context, Who};
use crate::connectors::ask::{Resolution, ResolveFuture};
use crate::connectors::offers::{
    Choice, ChoicesFuture, Offers, PromptArg, PromptArgs, PromptOffer, ResourceOffer, Shape, TemplateOffer, Values,
};
use crate::platforms::rechtspraak::{PLATFORM, RsClient};

/// The offers of `rechtspraak`.
pub const OFFERS: Offers = Offers {
    resources: &[
        ResourceOffer {
            uri: "besluitbron://rechtspraak/courts",
            name: "rechtspraak-courts",
            title: "Rechtspraak: instanties",
            description: "The current courts of the Rechtspraak value list with their abbreviations, as \
                          rechtspraak_courts gives them.",
            tool: "rechtspraak_courts",
            arguments: r#"{"limit": 200}"#,
            shape: Shape::Json,
        },
        ResourceOffer {
            uri: "besluitbron://rechtspraak/areas",
            name: "rechtspraak-areas",
            title: "Rechtspraak: rechtsgebieden",
            description: "The areas of law of the Rechtspraak value list, parents before their sub-areas, as \
                          rechtspraak_areas gives them.",
            tool: "rechtspraak_areas",
            arguments: r#"{"limit": 200}"#,
            shape: Shape::Json,
        },
        ResourceOffer {
            uri: "besluitbron://rechtspraak/procedures",
            name: "rechtspraak-procedures",
            title: "Rechtspraak: proceduresoorten",
            description: "The kinds of procedure of the Rechtspraak value list, as rechtspraak_procedures gives them.",
            tool: "rechtspraak_procedures",
            arguments: r#"{"limit": 200}"#,
            shape: Shape::Json,
        },
    ],
    templates: &[TemplateOffer {
        uri_template: "besluitbron://rechtspraak/ruling/{id}",
        name: "rechtspraak-ruling",
        title: "Rechtspraak: uitspraak",
        description: "One ruling by its ECLI (e.g. ECLI:NL:HR:2026:1500) with its metadata and the first page of \
                      its text, as rechtspraak_ruling gives it; rechtspraak_ruling reads on with `offset`.",
        tool: "rechtspraak_ruling",
        shape: Shape::Text,
        values: None,
    }],
    prompts: &[PromptOffer {
        name: "rechtspraak_sinds",
        title: "Welke rechtspraak is er over … sinds …?",
        description: "Which court rulings are there on a subject since a date? A plan that narrows by area of law \
                      and court with the value lists first, then scans summaries and reads only the relevant \
                      rulings.",
        arguments: &[
            PromptArg {
                name: "onderwerp",
                description: "Het onderwerp, bv. huurverhoging",
                required: true,
                values: None,
            },
            PromptArg {
                name: "sinds",
                description: "Eerste uitspraakdag, JJJJ-MM-DD",
                required: true,
                values: None,
            },
            PromptArg {
                name: "rechtsgebied",
                description: "Rechtsgebied (optioneel; naam uit rechtspraak_areas), bv. Civiel recht",
                required: false,
                values: Some(AREAS),
            },
            PromptArg {
                name: "instantie",
                description: "Instantie (optioneel; naam of afkorting uit rechtspraak_courts), bv. Hoge Raad",
                required: false,
                values: Some(COURTS),
            },
        ],
        plan: case_law_plan,
    }],
};

/// The courts' names, with their abbreviations.
pub const COURTS: Values = Values::Fetched {
    tool: "rechtspraak_courts",
    fetch: courts,
};

/// The areas of law's names.
pub const AREAS: Values = Values::Fetched {
    tool: "rechtspraak_areas",
    fetch: areas,
};

fn courts<'a>(ctx: &'a Context, call: &'a Call) -> ChoicesFuture<'a> {
    Box::pin(async move {
        let client = ctx.clients.get::<RsClient>(PLATFORM)?;
        let (answer, _) = ctx.fetch(Who::Caller, call, courts_call(&client)).await?;
        // Courts that still exist first: the ones an assistant means.
        let (current, ended): (Vec<_>, Vec<_>) = answer.courts.iter().partition(|c| c.end.is_none());
        Ok(current
            .into_iter()
            .chain(ended)
            .map(|c| Choice {
                value: c.name.clone(),
                label: c.abbreviation.clone().unwrap_or_default(),
            })
            .collect())
    })
}

fn areas<'a>(ctx: &'a Context, call: &'a Call) -> ChoicesFuture<'a> {
    Box::pin(async move {
        let client = ctx.clients.get::<RsClient>(PLATFORM)?;
        let (answer, _) = ctx.fetch(Who::Caller, call, areas_call(&client)).await?;
        Ok(answer
            .areas
            .iter()
            .map(|a| Choice {
                value: a.name.clone(),
                label: String::new(),
            })
            .collect())
    })
}

/// An asked `court` read against the courts' list (the one `rechtspraak_search`
/// reads), for asking back; the list out of reach is no resolution.
pub(super) fn court_asked<'a>(ctx: &'a Context, call: &'a Call, asked: &'a str) -> ResolveFuture<'a> {
    Box::pin(async move {
        let Ok(client) = ctx.clients.get::<RsClient>(PLATFORM) else {
            return Resolution::Unknown;
        };
        match ctx.fetch(Who::Caller, call, courts_call(&client)).await {
            Ok((answer, _)) => resolve::court_choices(&answer.courts, asked),
            Err(_) => Resolution::Unknown,
        }
    })
}

/// An asked `area` read against the areas' list (the one `rechtspraak_search` reads),
/// for asking back; the list out of reach is no resolution.
pub(super) fn area_asked<'a>(ctx: &'a Context, call: &'a Call, asked: &'a str) -> ResolveFuture<'a> {
    Box::pin(async move {
        let Ok(client) = ctx.clients.get::<RsClient>(PLATFORM) else {
            return Resolution::Unknown;
        };
        match ctx.fetch(Who::Caller, call, areas_call(&client)).await {
            Ok((answer, _)) => resolve::area_choices(&answer.areas, asked),
            Err(_) => Resolution::Unknown,
        }
    })
}

/// An asked `procedure` read against the procedures' list (the one
/// `rechtspraak_search` reads), for asking back; the list out of reach is no resolution.
pub(super) fn procedure_asked<'a>(ctx: &'a Context, call: &'a Call, asked: &'a str) -> ResolveFuture<'a> {
    Box::pin(async move {
        let Ok(client) = ctx.clients.get::<RsClient>(PLATFORM) else {
            return Resolution::Unknown;
        };
        match ctx.fetch(Who::Caller, call, procedures_call(&client)).await {
            Ok((answer, _)) => resolve::procedure_choices(&answer.procedures, asked),
            Err(_) => Resolution::Unknown,
        }
    })
}

fn case_law_plan(args: &PromptArgs) -> String {
    let subject = args.required("onderwerp");
    let since = args.required("sinds");
    let mut filters = format!("date_from \"{since}\"");
    if let Some(area) = args.get("rechtsgebied") {
        filters.push_str(&format!(", area \"{area}\""));
    }
    if let Some(court) = args.get("instantie") {
        filters.push_str(&format!(", court \"{court}\""));
    }
    format!(
        "Onderzoeksvraag: welke rechtspraak is er over \"{subject}\" sinds {since}?\n\n\
         Werk zo, de goedkope stappen eerst:\n\
         1. Kies het rechtsgebied en eventueel de instantie uit rechtspraak_areas en rechtspraak_courts (uit \
         BesluitBrons buffer, goedkoop). rechtspraak_search zoekt niet op woorden: het onderwerp bepaalt de \
         filters en de keuze uit de samenvattingen.\n\
         2. rechtspraak_search met {filters}, sort newest: ECLI's, datums en samenvattingen. Te veel: een \
         smaller rechtsgebied, een procedure (rechtspraak_procedures) of een kortere periode; met offset de \
         volgende pagina.\n\
         3. Kies uit de samenvattingen de uitspraken die over \"{subject}\" gaan en lees alleen die met \
         rechtspraak_ruling (id: de ECLI); een lange tekst lees je verder met offset en length.\n\
         4. Antwoord met de lijn in de rechtspraak en noem bij elke bewering de ECLI en de datum.\n\
         Vind je niets, zeg dan welke filters je gebruikte en verbreed (ander rechtsgebied, geen instantie); \
         verzin geen uitspraken."
    )
}
