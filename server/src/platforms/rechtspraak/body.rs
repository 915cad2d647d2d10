//! The ruling's text: an `uitspraak`, `conclusie` or `inhoudsindicatie` element as
//! readable plain text for an assistant.
//!
//! What is kept: headings (`title`, `bridgehead`) as `## …` lines with their number
//! (`nr`), numbered paragraphs (`parablock`/`paragroup` with `nr`) as `2.1 text`, lists
//! as `- ` or `1. ` items, block quotes as `> `, tables as `| a | b |` rows, footnotes as
//! `[^1]` markers with their text gathered at the end under `Footnotes`, and images as a
//! mention (`[image: name]`) — never inlined — followed by what the ruling writes for
//! them in words (`textobject`, `caption`). Any other element (`emphasis`, `section`,
//! the `uitspraak.info` header, elements this reader does not know) keeps its text.
//!
//! Invariants: whitespace inside a paragraph is folded to single spaces; blocks are
//! separated by one blank line; the walk is bounded by the tree's depth
//! ([`super::xml::MAX_DEPTH`]); nothing here panics, whatever the tree holds.

use super::xml::{Element, Node, fold_space};

/// The text of a body and how many images it mentions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BodyText {
    /// The readable text.
    pub text: String,
    /// Images mentioned (not inlined).
    pub images: u32,
}

/// Renders `element` (an `uitspraak`, `conclusie` or `inhoudsindicatie`) as text.
pub fn render(element: &Element) -> BodyText {
    let mut w = Writer::default();
    w.children(element);
    w.flush();
    if !w.footnotes.is_empty() {
        let mut notes = String::from("Footnotes");
        for (label, text) in &w.footnotes {
            notes.push_str(&format!("\n[^{label}] {text}"));
        }
        w.blocks.push(notes);
    }
    BodyText {
        text: w.blocks.join("\n\n"),
        images: w.images,
    }
}

#[derive(Default)]
struct Writer {
    /// Finished blocks.
    blocks: Vec<String>,
    /// The block being written.
    line: String,
    /// What goes before the block's text when it is written (a number, a list mark).
    prefix: String,
    /// Inline captures (a footnote's or a table cell's text), innermost last.
    captures: Vec<String>,
    /// Open lists: `None` itemised, `Some(n)` ordered with the last number given.
    lists: Vec<Option<u32>>,
    /// Open tables: rows of cells.
    tables: Vec<Vec<Vec<String>>>,
    /// Block-quote depth.
    quotes: usize,
    /// Heading depth (inside `title`/`bridgehead`).
    heading: usize,
    /// Footnotes: label and text.
    footnotes: Vec<(String, String)>,
    images: u32,
}

impl Writer {
    fn sink(&mut self) -> &mut String {
        match self.captures.last_mut() {
            Some(c) => c,
            None => &mut self.line,
        }
    }

    fn text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let starts_space = text.starts_with(char::is_whitespace);
        let ends_space = text.ends_with(char::is_whitespace);
        let folded = fold_space(text);
        let sink = self.sink();
        if (starts_space || folded.is_empty()) && !sink.is_empty() && !sink.ends_with(' ') {
            sink.push(' ');
        }
        sink.push_str(&folded);
        if ends_space && !folded.is_empty() {
            sink.push(' ');
        }
    }

    /// Ends the block being written (inside a capture: a space).
    fn flush(&mut self) {
        if let Some(c) = self.captures.last_mut() {
            if !c.is_empty() && !c.ends_with(' ') {
                c.push(' ');
            }
            return;
        }
        let text = self.line.trim();
        if text.is_empty() {
            self.line.clear();
            return;
        }
        let mut block = String::new();
        for _ in 0..self.quotes {
            block.push_str("> ");
        }
        if self.heading > 0 {
            block.push_str("## ");
        }
        block.push_str(&self.prefix);
        block.push_str(text);
        self.blocks.push(block);
        self.line.clear();
        self.prefix.clear();
    }

    fn children(&mut self, e: &Element) {
        for child in &e.children {
            match child {
                Node::Text(t) => self.text(t),
                Node::Element(c) => self.element(c),
            }
        }
    }

    fn element(&mut self, e: &Element) {
        match e.name.as_str() {
            "nr" => {
                let nr = e.trimmed_text();
                if self.sink().trim().is_empty() && self.captures.is_empty() {
                    if !nr.is_empty() {
                        self.prefix.push_str(&nr);
                        self.prefix.push(' ');
                    }
                } else {
                    self.text(&format!(" {nr} "));
                }
            }
            "title" | "bridgehead" => {
                self.flush();
                self.heading += 1;
                self.children(e);
                self.flush();
                self.heading -= 1;
            }
            "blockquote" => {
                self.flush();
                self.quotes += 1;
                self.children(e);
                self.flush();
                self.quotes -= 1;
            }
            "itemizedlist" | "orderedlist" => {
                self.flush();
                self.lists.push((e.name == "orderedlist").then_some(0));
                self.children(e);
                self.flush();
                self.lists.pop();
            }
            "listitem" => {
                self.flush();
                let mark = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        *n += 1;
                        format!("{n}. ")
                    }
                    _ => "- ".to_owned(),
                };
                if self.captures.is_empty() {
                    self.prefix.push_str(&mark);
                } else {
                    self.text(&mark);
                }
                self.children(e);
                self.flush();
            }
            "footnote" => {
                let label = e
                    .attr_local("label")
                    .map(fold_space)
                    .filter(|l| !l.is_empty())
                    .unwrap_or_else(|| (self.footnotes.len() + 1).to_string());
                self.captures.push(String::new());
                self.children(e);
                let text = self.captures.pop().unwrap_or_default();
                self.footnotes.push((label.clone(), fold_space(&text)));
                let sink = self.sink();
                sink.push_str(&format!("[^{label}]"));
            }
            "table" | "informaltable" => {
                self.flush();
                self.tables.push(Vec::new());
                self.children(e);
                let rows = self.tables.pop().unwrap_or_default();
                self.table(rows);
            }
            "row" => {
                if let Some(table) = self.tables.last_mut() {
                    table.push(Vec::new());
                    self.children(e);
                } else {
                    self.children(e);
                    self.flush();
                }
            }
            "entry" if !self.tables.is_empty() => {
                self.captures.push(String::new());
                self.children(e);
                let cell = fold_space(&self.captures.pop().unwrap_or_default()).replace('|', "/");
                if let Some(row) = self.tables.last_mut().and_then(|t| t.last_mut()) {
                    row.push(cell);
                }
            }
            "mediaobject" | "inlinemediaobject" | "imageobject" | "imagedata" | "graphic" | "image" => {
                self.images += 1;
                let name = image_name(e).unwrap_or_else(|| "unnamed".to_owned());
                self.text(&format!(" [image: {name}] "));
                // What the ruling writes for the image in words (a scheme as text, a
                // caption): part of its text.
                for words in e
                    .elements()
                    .filter(|c| matches!(c.name.as_str(), "textobject" | "caption"))
                {
                    self.children(words);
                }
            }
            "para" | "parablock" | "paragroup" | "section" | "uitspraak.info" | "simpara" | "formalpara" | "p"
            | "div" => {
                self.flush();
                self.children(e);
                self.flush();
            }
            "br" | "linebreak" => self.flush(),
            // `emphasis`, `superscript`, `ulink` and anything unknown: their text.
            _ => self.children(e),
        }
    }

    fn table(&mut self, rows: Vec<Vec<String>>) {
        let rows: Vec<Vec<String>> = rows.into_iter().filter(|r| !r.is_empty()).collect();
        if rows.is_empty() {
            return;
        }
        if !self.captures.is_empty() {
            let text: Vec<String> = rows.iter().map(|r| r.join(", ")).collect();
            self.text(&format!(" {} ", text.join("; ")));
            return;
        }
        let columns = rows.iter().map(Vec::len).max().unwrap_or(1);
        let mut lines = Vec::with_capacity(rows.len() + 1);
        for (i, row) in rows.iter().enumerate() {
            lines.push(format!("| {} |", row.join(" | ")));
            if i == 0 && rows.len() > 1 {
                lines.push(format!("|{}", "---|".repeat(columns)));
            }
        }
        let quote = "> ".repeat(self.quotes);
        self.blocks.push(
            lines
                .iter()
                .map(|l| format!("{quote}{l}"))
                .collect::<Vec<_>>()
                .join("\n"),
        );
    }
}

/// The file an image element names (`fileref` or `src`, on it or below it).
fn image_name(e: &Element) -> Option<String> {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        if let Some(name) = e.attr_local("fileref").or_else(|| e.attr_local("src")) {
            let name = fold_space(name);
            if !name.is_empty() {
                return Some(name.chars().take(200).collect());
            }
        }
        stack.extend(e.elements());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::xml::parse;
    use super::*;

    fn text(xml: &str) -> BodyText {
        render(&parse(xml.as_bytes()).expect("xml"))
    }

    #[test]
    fn numbered_paragraphs_headings_lists_quotes() {
        let t = text(
            "<uitspraak xmlns=\"http://www.rechtspraak.nl/schema/rechtspraak-1.0\">
               <uitspraak.info><para>RECHTBANK   AMSTERDAM</para></uitspraak.info>
               <section><title><nr>2</nr> De  beoordeling</title>
                 <parablock><nr>2.1</nr><para>Eiser stelt <emphasis role=\"bold\">dat</emphasis> het
                   besluit onjuist is.</para></parablock>
                 <orderedlist><listitem><para>eerst</para></listitem><listitem><para>dan</para></listitem></orderedlist>
                 <itemizedlist><listitem><para>punt</para></listitem></itemizedlist>
                 <blockquote><para>artikel 1</para></blockquote>
                 <onbekend>Onbekende tekst</onbekend>
               </section>
             </uitspraak>",
        );
        assert_eq!(
            t.text,
            "RECHTBANK AMSTERDAM\n\n## 2 De beoordeling\n\n2.1 Eiser stelt dat het besluit onjuist is.\n\n1. eerst\n\n2. dan\n\n- punt\n\n> artikel 1\n\nOnbekende tekst"
        );
    }

    #[test]
    fn footnotes_tables_and_images() {
        let t = text(
            "<uitspraak>
               <para>Zie het arrest<footnote label=\"1\"><para>HR 1 januari 2020.</para></footnote> en de wet<footnote><para>Art. 6:162 BW.</para></footnote>.</para>
               <table><tgroup cols=\"2\"><thead><row><entry>Post</entry><entry>Bedrag</entry></row></thead>
                 <tbody><row><entry>Schade</entry><entry>&#8364; 1.000</entry></row></tbody></tgroup></table>
               <mediaobject><imageobject><imagedata fileref=\"plattegrond.png\"/></imageobject></mediaobject>
             </uitspraak>",
        );
        assert_eq!(
            t.text,
            "Zie het arrest[^1] en de wet[^2].\n\n| Post | Bedrag |\n|---|---|\n| Schade | € 1.000 |\n\n[image: plattegrond.png]\n\nFootnotes\n[^1] HR 1 januari 2020.\n[^2] Art. 6:162 BW."
        );
        assert_eq!(t.images, 1);
    }
}
