//! The VLOS reader's tests: small reports built here, and every real report in the corpus.

use super::*;

const NS: &str = "http://www.tweedekamer.nl/ggm/vergaderverslag/v1.0";

fn spreker(name: &str, faction: Option<&str>, soort: &str, function: &str) -> String {
    format!(
        "<spreker soort=\"{soort}\" objectid=\"o-{name}\">{}<aanhef>De heer</aanhef><verslagnaam>{name}</verslagnaam>\
         <voornaam>V</voornaam><achternaam>{name}</achternaam><functie>{function}</functie></spreker>",
        faction.map(|f| format!("<fractie>{f}</fractie>")).unwrap_or_default()
    )
}

fn turn(tag: &str, speaker: &str, chair: bool, text: &str, inner: &str) -> String {
    format!(
        "<{tag} objectid=\"x\">{speaker}<markeertijdbegin>2025-07-02T19:00:22</markeertijdbegin>\
         <isvoorzitter>{chair}</isvoorzitter><isdraad>false</isdraad><tekst><alinea><alineaitem>{text}</alineaitem>\
         </alinea></tekst>{inner}</{tag}>"
    )
}

fn report(items: &str) -> String {
    format!(
        "\u{feff}<?xml version=\"1.0\" encoding=\"UTF-8\"?><vlosCoreDocument xmlns=\"{NS}\" soort=\"Tussenpublicatie\" \
         status=\"Ongecorrigeerd\" versie=\"1.3\"><vergadering soort=\"Commissie\"><titel>MIVD</titel>\
         <datum>2025-07-02T00:00:00</datum><sluiting>0001-01-01T00:00:00</sluiting><activiteit soort=\"Commissiedebat\">\
         <titel>MIVD</titel><parlisid>2025A04496</parlisid><activiteithoofd><titel>MIVD</titel><activiteitdeel>\
         <activiteititem>{items}</activiteititem></activiteitdeel></activiteithoofd></activiteit></vergadering>\
         </vlosCoreDocument>"
    )
}

#[test]
fn interruptions_are_the_interrupters_and_the_next_speech_is_the_reply() {
    let pool = spreker("Pool", Some("PVV"), "Tweede Kamerlid", "lid Tweede Kamer");
    let chair = spreker("Kahraman", Some("NSC"), "Tweede Kamerlid", "lid Tweede Kamer");
    let dijk = spreker("Olger van Dijk", Some("NSC"), "Tweede Kamerlid", "lid Tweede Kamer");
    let interruptions = format!(
        "{}{}",
        turn(
            "interrumpant",
            &chair,
            true,
            "De <nadruk type=\"Vet\">voorzitter</nadruk>:</alineaitem><alineaitem>Een interruptie.",
            ""
        ),
        turn(
            "interrumpant",
            &dijk,
            false,
            "De heer <nadruk type=\"Vet\">Olger van Dijk</nadruk> (NSC):</alineaitem><alineaitem>Wat  vraagt\r\n de PVV?",
            ""
        )
    );
    let xml = report(&format!(
        "<titel>Woordvoerder - Pool</titel>{}{}",
        turn(
            "woordvoerder",
            &pool,
            false,
            "De heer <nadruk type=\"Vet\">Pool</nadruk> (PVV):</alineaitem><alineaitem>Hartelijk dank.",
            &interruptions
        ),
        turn(
            "woordvoerder",
            &pool,
            false,
            "De heer Pool (PVV):</alineaitem><alineaitem>Heel concreet.",
            ""
        )
    ));
    let r = read_report(xml.as_bytes()).expect("a report");
    assert_eq!(r.status.as_deref(), Some("Ongecorrigeerd"));
    assert!(r.meeting.unfinished && r.meeting.closed_at.is_none());
    let turns: Vec<(String, bool, Role, String)> = r
        .turns()
        .map(|t| {
            (
                r.speakers[t.speaker as usize].name.clone(),
                t.chair,
                t.role,
                t.text.clone(),
            )
        })
        .collect();
    let index = |name: &str| r.speakers.iter().position(|s| s.name == name).unwrap() as u32;
    assert_eq!(
        turns,
        vec![
            ("Pool".into(), false, Role::Speech, "Hartelijk dank.".into()),
            ("Kahraman".into(), true, Role::Speech, "Een interruptie.".into()),
            (
                "Olger van Dijk".into(),
                false,
                Role::Interruption { of: index("Pool") },
                "Wat vraagt de PVV?".into()
            ),
            (
                "Pool".into(),
                false,
                Role::Reply {
                    to: index("Olger van Dijk")
                },
                "Heel concreet.".into()
            ),
        ]
    );
    assert_eq!(r.speakers[index("Kahraman") as usize].faction.as_deref(), Some("NSC"));
    assert_eq!(r.activities[0].number.as_deref(), Some("2025A04496"));
    assert!(matches!(&r.activities[0].parts[0], Part::Heading { title } if title == "MIVD"));
}

#[test]
fn a_motion_in_a_fragment_inside_a_speech_is_a_note_and_a_submitted_case() {
    let minister = spreker("Brekelmans", None, "Minister", "minister van Defensie");
    let member = spreker("Bamenga", Some("D66"), "Tweede Kamerlid", "lid Tweede Kamer");
    let fragment = format!(
        "<draadboekfragment soort=\"Motie indiening\"><isdraad>true</isdraad><tekst><alineagroep type=\"Motietekst\">\
         <alinea><alineaitem>De Kamer,</alineaitem></alinea><alinea><alineaitem>verzoekt de regering</alineaitem>\
         </alinea></alineagroep></tekst><zaken><zaak soort=\"Motie\"><titel>de motie-Bamenga over ADV's (36284, nr. 45)</titel>\
         <dossiernummer>36284</dossiernummer><stuknummer>45</stuknummer><sprekers>{member}</sprekers></zaak></zaken>\
         <sprekers>{member}</sprekers></draadboekfragment>"
    );
    let xml = report(&format!(
        "{}{}",
        turn(
            "woordvoerder",
            &member,
            false,
            "De heer Bamenga (D66):</alineaitem><alineaitem>Mijn motie.",
            &fragment
        ),
        turn(
            "woordvoerder",
            &minister,
            false,
            "Minister <nadruk>Brekelmans</nadruk>:</alineaitem><alineaitem>Oordeel Kamer.",
            ""
        ),
    ));
    let r = read_report(xml.as_bytes()).expect("a report");
    let a = &r.activities[0];
    assert!(
        matches!(&a.parts[2], Part::Note { kind: Some(k), text } if k == "Motie indiening" && text == "De Kamer,\nverzoekt de regering")
    );
    let motion = &a.cases[0];
    assert!(motion.is_motion() && motion.submitted);
    assert_eq!(
        (motion.dossier.as_deref(), motion.number.as_deref()),
        (Some("36284"), Some("45"))
    );
    assert_eq!(r.speakers[motion.submitters[0] as usize].name, "Bamenga");
    let minister = r.turns().nth(1).unwrap();
    assert_eq!(
        r.speakers[minister.speaker as usize].label(),
        "Brekelmans (minister van Defensie)"
    );
    assert_eq!(minister.text, "Oordeel Kamer.");
}

#[test]
fn votes_and_texts_outside_speeches_are_read_in_order() {
    let xml = format!(
        "<vlosCoreDocument xmlns=\"{NS}\"><vergadering soort=\"Plenair\"><titel>105e vergadering</titel>\
         <activiteit soort=\"Stemmingen\"><titel>Stemmingen</titel><tekst><alinea><alineaitem>Aan de orde.</alineaitem>\
         </alinea></tekst><activiteithoofd soort=\"Stemming\"><titel>Stemming brief</titel><activiteitdeel><activiteititem \
         soort=\"Besluit\"><tekst><alinea><alineaitem>Ik constateer dat het voorstel is aangenomen.</alineaitem></alinea>\
         </tekst><besluitvorm>Fractie</besluitvorm><uitslag>Aangenomen</uitslag><stemmingen><stemming><fractie>SP</fractie>\
         <stem>Tegen</stem></stemming><stemming><fractie>PVV</fractie><stem>Voor</stem></stemming></stemmingen>\
         </activiteititem></activiteitdeel></activiteithoofd></activiteit></vergadering></vlosCoreDocument>"
    );
    let r = read_report(xml.as_bytes()).expect("a report");
    assert!(r.is_casco(), "no speeches");
    assert_eq!(r.version, None, "older exports have no version");
    let parts = &r.activities[0].parts;
    assert!(matches!(&parts[0], Part::Note { text, .. } if text == "Aan de orde."));
    assert!(matches!(&parts[1], Part::Heading { title } if title == "Stemming brief"));
    assert!(matches!(&parts[2], Part::Note { text, .. } if text.ends_with("aangenomen.")));
    match &parts[3] {
        Part::Vote(v) => {
            assert_eq!(v.result.as_deref(), Some("Aangenomen"));
            assert_eq!(
                v.votes,
                vec![("SP".into(), "Tegen".into()), ("PVV".into(), "Voor".into())]
            );
        }
        other => panic!("a vote: {other:?}"),
    }
}

/// What real reports hold: a byte order mark, the document on one line, double spaces
/// and a line break inside a text, an external speaker with an empty `<functie/>` and
/// no faction, timestamps without a zone, and the `0001-01-01` of times not known yet.
#[test]
fn real_reports_quirks_are_read_as_what_they_mean() {
    let guest = "<spreker soort=\"Externe spreker\" objectid=\"76bc3852-4e93-40e4-9ce3-465fbe3c8868\">\
                 <aanhef>De heer</aanhef><verslagnaam>Eichelsheim</verslagnaam><voornaam>Onno</voornaam>\
                 <achternaam>Eichelsheim</achternaam><functie /></spreker>";
    let xml = report(&turn(
        "woordvoerder",
        guest,
        false,
        "De heer Eichelsheim:</alineaitem><alineaitem>Dank  u\r\n wel.",
        "",
    ))
    .replace(
        "<parlisid>",
        "<aanvangstijd>2025-07-03T18:00:00</aanvangstijd><eindtijd>0001-01-01T00:00:00</eindtijd><parlisid>",
    );
    assert!(
        xml.starts_with('\u{feff}') && !xml.replace("\r\n", "").contains('\n'),
        "one line"
    );
    let r = read_report(xml.as_bytes()).expect("a report");
    let t = r.turns().next().expect("the speech");
    let s = r.speaker(t.speaker).expect("its speaker");
    assert_eq!((s.faction.as_deref(), s.function.as_deref()), (None, None));
    assert_eq!(
        s.label(),
        "Eichelsheim (Externe spreker)",
        "an empty function says nothing"
    );
    assert_eq!(t.text, "Dank u wel.");
    assert_eq!(
        r.meeting.date.as_deref(),
        Some("2025-07-02T00:00:00"),
        "no zone, kept as given"
    );
    let a = &r.activities[0];
    assert_eq!(a.starts_at.as_deref(), Some("2025-07-03T18:00:00"));
    assert_eq!(a.ends_at, None, "not known yet");
    assert!(r.meeting.unfinished && r.meeting.closed_at.is_none());
}

#[test]
fn broken_cut_unsafe_or_foreign_documents_are_errors() {
    let whole = report("");
    assert!(read_report(whole.as_bytes()).is_ok());
    for cut in [whole.len() / 2, whole.len() - 3] {
        assert!(
            matches!(
                read_report(&whole.as_bytes()[..cut]),
                Err(VlosError::Incomplete(_) | VlosError::Xml { .. })
            ),
            "cut at {cut}"
        );
    }
    let entity = whole.replace("<titel>MIVD</titel>", "<titel>&xxe;</titel>");
    assert!(matches!(read_report(entity.as_bytes()), Err(VlosError::Incomplete(_))));
    let dtd = format!(
        "<!DOCTYPE a [<!ENTITY x \"y\">]>{}",
        whole.trim_start_matches('\u{feff}')
    );
    assert!(read_report(dtd.as_bytes()).is_err());
    assert!(matches!(read_report(b"<toestand/>"), Err(VlosError::NotReport(_))));
    assert!(matches!(
        read_report(format!("<vlosCoreDocument xmlns=\"{NS}\"/>").as_bytes()),
        Err(VlosError::NotReport(_))
    ));
    let deep = format!(
        "<vlosCoreDocument>{}{}</vlosCoreDocument>",
        "<x>".repeat(70),
        "</x>".repeat(70)
    );
    assert!(matches!(read_report(deep.as_bytes()), Err(VlosError::TooBig(_))));
}

#[test]
fn a_label_is_short_ends_with_a_colon_and_names_the_speaker_or_the_chair() {
    assert!(is_label("De heer Olger van Dijk (NSC):", "Olger van Dijk", false));
    assert!(is_label("De voorzitter:", "Kahraman", true));
    assert!(is_label("Minister Brekelmans:", "Brekelmans", false));
    assert!(!is_label("Dank u wel.", "Vermeer", true));
    assert!(!is_label(
        "Voorzitter, ik heb een vraag aan de minister:",
        "Ellian",
        false
    ));
    assert!(!is_label(
        "Voorzitter, mag ik de leden het volgende vragen:",
        "Kahraman",
        true
    ));
    assert!(
        !is_label("Ik heb drie vragen aan de heer Pool:", "Ellian", false),
        "a sentence naming someone else"
    );
    assert!(
        !is_label(
            "Ik stel de heer Pool en de minister en de leden nu graag deze vragen:",
            "Pool",
            false
        ),
        "a sentence, not a label"
    );
}

/// Every real report of the corpus reads, with a turn for every `woordvoerder` and
/// `interrumpant` the file holds (counted in its bytes, apart from this reader).
#[test]
fn every_real_report_reads_with_a_turn_for_each_speech_and_interruption() {
    let mut read = 0;
    for entry in besluitbron_fakes::corpus::folder("tk/vlos") {
        let path = std::path::PathBuf::from(&entry.path);
        let bytes = besluitbron_fakes::corpus::read(&entry.path).unwrap_or_else(|e| panic!("{e}"));
        let text = String::from_utf8_lossy(&bytes);
        let speeches = text.matches("<woordvoerder ").count() + text.matches("<interrumpant ").count();
        let r = read_report(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(r.turns().count(), speeches, "{}", path.display());
        assert_eq!(r.is_casco(), speeches == 0, "{}", path.display());
        for t in r.turns() {
            assert!(r.speaker(t.speaker).is_some_and(|s| !s.name.is_empty()));
        }
        read += 1;
    }
    assert!(read >= 8, "the corpus holds eight reports or more ({read})");
}
