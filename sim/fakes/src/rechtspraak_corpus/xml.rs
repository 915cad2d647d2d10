//! The XML the real service answers, written from the corpus: the three value lists, and
//! a ruling's content (its RDF metadata, and its text unless it has none or only the
//! metadata is asked for).
//!
//! Invariants: every text and attribute value is escaped. What it does not do: choose
//! which rulings a query returns (`corpus.rs`).

use std::fmt::Write as _;

use super::records::{FOOTNOTES_ECLI, LONG_ECLI, LONG_PARAGRAPHS, RsCorpus, RsRuling, dutch_date, esc};

impl RsCorpus {
    /// The Instanties list as the service sends it (identifiers wrapped in whitespace).
    pub fn instanties_xml(&self) -> String {
        let mut x = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<Instanties>\n");
        for c in &self.courts {
            let _ = write!(
                x,
                "  <Instantie>\n    <Naam>{}</Naam>\n    <Afkorting>{}</Afkorting>\n    <Type>{}</Type>\n    <BeginDate>{}</BeginDate>\n",
                esc(&c.name),
                esc(&c.abbreviation),
                esc(c.kind),
                c.begin
            );
            if let Some(end) = c.end {
                let _ = writeln!(x, "    <EndDate>{end}</EndDate>");
            }
            let _ = write!(
                x,
                "    <Identifier>\n      {}\n    </Identifier>\n  </Instantie>\n",
                esc(&c.identifier)
            );
        }
        x.push_str("</Instanties>\n");
        x
    }

    /// The Rechtsgebieden list, nested.
    pub fn rechtsgebieden_xml(&self) -> String {
        let mut x = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<Rechtsgebieden>\n");
        for (i, top) in self.areas.iter().enumerate().filter(|(_, a)| a.parent.is_none()) {
            let _ = write!(
                x,
                "  <Rechtsgebied>\n    <Identifier>{}</Identifier>\n    <Naam>{}</Naam>\n",
                esc(&top.identifier),
                esc(&top.name)
            );
            for sub in self.areas.iter().filter(|a| a.parent == Some(i)) {
                let _ = write!(
                    x,
                    "    <Rechtsgebied>\n      <Identifier>\n        {}\n      </Identifier>\n      <Naam>{}</Naam>\n    </Rechtsgebied>\n",
                    esc(&sub.identifier),
                    esc(&sub.name)
                );
            }
            x.push_str("  </Rechtsgebied>\n");
        }
        x.push_str("</Rechtsgebieden>\n");
        x
    }

    /// The Proceduresoorten list.
    pub fn proceduresoorten_xml(&self) -> String {
        let mut x = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<Proceduresoorten>\n");
        for p in &self.procedures {
            let _ = write!(
                x,
                "  <Proceduresoort>\n    <Identifier>{}</Identifier>\n    <Naam>{}</Naam>\n  </Proceduresoort>\n",
                esc(&p.identifier),
                esc(&p.name)
            );
        }
        x.push_str("</Proceduresoorten>\n");
        x
    }

    /// `/uitspraken/content` for `r`: the RDF, and unless `meta_only` the inhoudsindicatie
    /// and the text (when it has one).
    pub fn content_xml(&self, r: &RsRuling, meta_only: bool) -> String {
        let mut x = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<open-rechtspraak>\n");
        x.push_str(
            "  <rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\" \
             xmlns:rdfs=\"http://www.w3.org/2000/01/rdf-schema#\" xmlns:dcterms=\"http://purl.org/dc/terms/\" \
             xmlns:psi=\"http://psi.rechtspraak.nl/\" xmlns:ecli=\"https://e-justice.europa.eu/ecli\" \
             xmlns:bwb=\"bwb-dl\" xmlns:cvdr=\"http://decentrale.regelgeving.overheid.nl/cvdr/\">\n",
        );
        self.write_description(&mut x, r);
        let _ = write!(
            x,
            "    <rdf:Description rdf:about=\"https://uitspraken.rechtspraak.nl/InzienDocument?id={e}\">\n      <dcterms:identifier>https://uitspraken.rechtspraak.nl/InzienDocument?id={e}</dcterms:identifier>\n      <dcterms:format>text/html</dcterms:format>\n      <dcterms:title>{t}</dcterms:title>\n    </rdf:Description>\n  </rdf:RDF>\n",
            e = r.ecli,
            t = esc(&self.title(r))
        );
        if !meta_only && r.deleted.is_none() {
            let summary = r.summary.as_deref().unwrap_or("-");
            let _ = writeln!(
                x,
                "  <inhoudsindicatie id=\"{}:INH\"><para>{}</para></inhoudsindicatie>",
                r.ecli,
                esc(summary)
            );
            if r.has_text {
                x.push_str(&self.body_xml(r));
            }
        }
        x.push_str("</open-rechtspraak>\n");
        x
    }

    /// The ruling's metadata as the service describes it (`rdf:Description`): its ids,
    /// dates, court, case number, type, procedure, areas, relations, places of
    /// publication and the LJN it replaces.
    fn write_description(&self, x: &mut String, r: &RsRuling) {
        let court = &self.courts[r.court];
        x.push_str("    <rdf:Description>\n");
        let _ = writeln!(x, "      <dcterms:identifier>{}</dcterms:identifier>", r.ecli);
        x.push_str("      <dcterms:format>text/xml</dcterms:format>\n      <dcterms:accessRights>public</dcterms:accessRights>\n");
        let _ = writeln!(x, "      <dcterms:modified>{}</dcterms:modified>", r.modified);
        let _ = writeln!(
            x,
            "      <dcterms:issued rdfs:label=\"Publicatiedatum\">{}</dcterms:issued>",
            r.issued
        );
        x.push_str("      <dcterms:publisher rdfs:label=\"Uitgever\" resourceIdentifier=\"http://standaarden.overheid.nl/owms/terms/Raad_voor_de_Rechtspraak\">Raad voor de Rechtspraak</dcterms:publisher>\n");
        x.push_str("      <dcterms:language>nl</dcterms:language>\n");
        let _ = writeln!(
            x,
            "      <dcterms:creator rdfs:label=\"Instantie\" resourceIdentifier=\"{}\">{}</dcterms:creator>",
            esc(&court.identifier),
            esc(&court.name)
        );
        let _ = writeln!(
            x,
            "      <dcterms:date rdfs:label=\"Uitspraakdatum\">{}</dcterms:date>",
            r.date
        );
        let _ = writeln!(
            x,
            "      <psi:zaaknummer rdfs:label=\"Zaaknr\">{}</psi:zaaknummer>",
            esc(&r.case_number)
        );
        let _ = writeln!(
            x,
            "      <dcterms:type rdfs:label=\"Type\" resourceIdentifier=\"http://psi.rechtspraak.nl/{}\">{}</dcterms:type>",
            r.kind.to_ascii_lowercase(),
            r.kind
        );
        let p = &self.procedures[r.procedure];
        let _ = writeln!(
            x,
            "      <psi:procedure rdfs:label=\"Procedure\" resourceIdentifier=\"{}\">{}</psi:procedure>",
            esc(&p.identifier),
            esc(&p.name)
        );
        for &a in &r.areas {
            let area = &self.areas[a];
            let name = match area.parent {
                Some(top) => format!("{}; {}", self.areas[top].name, area.name),
                None => area.name.clone(),
            };
            let _ = writeln!(
                x,
                "      <dcterms:subject rdfs:label=\"Rechtsgebied\" resourceIdentifier=\"{}\">{}</dcterms:subject>",
                esc(&area.identifier),
                esc(&name)
            );
        }
        for rel in &r.relations {
            let _ = writeln!(
                x,
                "      <dcterms:relation ecli:resourceIdentifier=\"{}\" psi:type=\"http://psi.rechtspraak.nl/{}\" psi:aanleg=\"http://psi.rechtspraak.nl/{}\" rdfs:label=\"Formele relatie\">{}</dcterms:relation>",
                rel.ecli,
                rel.kind,
                rel.direction,
                esc(&rel.label)
            );
        }
        if !r.vindplaatsen.is_empty() {
            x.push_str("      <dcterms:hasVersion rdfs:label=\"Vindplaatsen\" resourceIdentifier=\"http://psi.rechtspraak.nl/vindplaats\">\n        <rdf:list>\n");
            for v in &r.vindplaatsen {
                let _ = writeln!(x, "          <rdf:li>{}</rdf:li>", esc(v));
            }
            x.push_str("        </rdf:list>\n      </dcterms:hasVersion>\n");
        }
        if let Some(ljn) = &r.replaces {
            let _ = writeln!(
                x,
                "      <dcterms:replaces ecli:resourceIdentifier=\"{ljn}\">{ljn}</dcterms:replaces>"
            );
        }
        x.push_str("    </rdf:Description>\n");
    }

    fn body_xml(&self, r: &RsRuling) -> String {
        let element = if r.kind == "Conclusie" {
            "conclusie"
        } else {
            "uitspraak"
        };
        let court = &self.courts[r.court];
        let area = &self.areas[r.areas[0]].name;
        let mut x = format!(
            "  <{element} id=\"{}:DOC\" xml:space=\"preserve\" xmlns=\"http://www.rechtspraak.nl/schema/rechtspraak-1.0\">\n",
            r.ecli
        );
        let _ = writeln!(
            x,
            "    <{element}.info><para>{}</para><para>Zaaknummer: {}</para><para>datum: {}</para></{element}.info>",
            esc(&court.name.to_uppercase()),
            esc(&r.case_number),
            dutch_date(&r.date)
        );
        if r.ecli == FOOTNOTES_ECLI {
            x.push_str(FOOTNOTES_BODY);
        } else if r.ecli == LONG_ECLI {
            x.push_str("    <section role=\"overwegingen\"><title><nr>1</nr>Beoordeling</title>\n");
            for n in 1..=LONG_PARAGRAPHS {
                let _ = writeln!(
                    x,
                    "      <parablock><nr>1.{n}.</nr><para>Onderdeel {n} van het middel klaagt dat het hof bij de \
                     begroting van de schade is uitgegaan van een onjuiste maatstaf. De klacht faalt: het hof heeft \
                     de stellingen van partijen in hun onderlinge samenhang beoordeeld en zijn oordeel toereikend \
                     gemotiveerd; zie ook de conclusie onder {n}.2 en de daar genoemde rechtspraak over artikel \
                     6:97 BW en de schatting van schade.</para></parablock>"
                );
            }
            x.push_str("    </section>\n    <section role=\"beslissing\"><title><nr>2</nr>Conclusie</title><para>De conclusie strekt tot verwerping van het beroep.</para></section>\n");
        } else {
            let _ = write!(
                x,
                "    <section role=\"procesverloop\"><title><nr>1</nr>Het procesverloop</title>\n      <parablock><nr>1.1.</nr><para>De zaak {} is behandeld door de {}.</para></parablock>\n    </section>\n    <section role=\"overwegingen\"><title><nr>2</nr>De beoordeling</title>\n      <parablock><nr>2.1.</nr><para>Het geschil ligt op het terrein van het <emphasis role=\"italic\">{}</emphasis>.</para></parablock>\n      <parablock><nr>2.2.</nr><para>Overwegingen in zaak {}.</para></parablock>\n    </section>\n    <section role=\"beslissing\"><title><nr>3</nr>De beslissing</title><para>Beslist in {}.</para></section>\n",
                esc(&r.case_number),
                esc(&court.name),
                esc(&area.to_lowercase()),
                r.ecli,
                r.ecli
            );
        }
        let _ = writeln!(x, "  </{element}>");
        x
    }
}

/// The body of [`FOOTNOTES_ECLI`] (after its header).
const FOOTNOTES_BODY: &str = r#"    <paragroup><title><nr>1</nr>Het geding in cassatie</title>
      <parablock><nr>1.1</nr><para>Eiseres heeft beroep in cassatie ingesteld<footnote label="1"><para>Procesinleiding van 3 maart 2026.</para></footnote> tegen het arrest van het hof.</para></parablock>
      <parablock><nr>1.2</nr><para>De conclusie van de Advocaat-Generaal<footnote label="2"><para>ECLI:NL:PHR:2026:400.</para></footnote> strekt tot verwerping.</para></parablock>
    </paragroup>
    <paragroup><title><nr>2</nr>Beoordeling van het middel</title>
      <bridgehead>Schadevergoeding</bridgehead>
      <parablock><nr>2.1</nr><para>Het hof heeft de schade als volgt begroot:</para></parablock>
      <table><tgroup cols="2"><thead><row><entry>Post</entry><entry>Bedrag</entry></row></thead>
        <tbody><row><entry>Materiële schade</entry><entry>&#8364; 12.500</entry></row><row><entry>Immateriële schade</entry><entry>&#8364; 2.000</entry></row></tbody></tgroup></table>
      <parablock><nr>2.2</nr><para>Het middel klaagt dat:</para></parablock>
      <orderedlist><listitem><para>het hof de maatstaf heeft miskend;</para></listitem><listitem><para>het oordeel onbegrijpelijk is.</para></listitem></orderedlist>
      <blockquote><para>Artikel 6:162 lid 1 BW: Hij die jegens een ander een onrechtmatige daad pleegt, is verplicht de schade te vergoeden.</para></blockquote>
      <itemizedlist><listitem><para>eerste klacht faalt</para></listitem><listitem><para>tweede klacht slaagt</para></listitem></itemizedlist>
      <mediaobject><imageobject><imagedata fileref="situatieschets.png"/></imageobject></mediaobject>
      <kop.onbekend>Een element dat de lezer niet kent.</kop.onbekend>
    </paragroup>
    <paragroup><title><nr>3</nr>Beslissing</title><para>De Hoge Raad vernietigt het arrest van het hof.</para></paragroup>
"#;
