//! What a connector offers besides its tools: resources, resource templates, prompts and
//! the completion of their arguments — declared in the connector's own module (its
//! [`Offers`], a field of its `ConnectorSpec`) and served by the MCP layer for every
//! address.
//!
//! A resource names the tool that answers it, and a completion source either lists
//! fixed values or fetches its reference list with the very `PlatformCall` its tool
//! uses (the same buffer key), asked as the caller: there is no second fetch path.
//!
//! What this module does not do: serve any of it (`crate::mcp::offers` does).

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;

use crate::call::{AnswerError, Call, Context};
use crate::platforms::http::brief;

/// What one connector offers besides its tools.
#[derive(Debug)]
pub struct Offers {
    /// Fixed resources (the reference lists).
    pub resources: &'static [ResourceOffer],
    /// Resource templates (documents by id).
    pub templates: &'static [TemplateOffer],
    /// Prompts: research workflows.
    pub prompts: &'static [PromptOffer],
}

impl Offers {
    /// A connector that offers nothing besides its tools.
    pub const NONE: Offers = Offers {
        resources: &[],
        templates: &[],
        prompts: &[],
    };
}

/// How a resource shows its tool's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// The structured content, as `application/json` (a reference list).
    Json,
    /// The text, as `text/plain` (a document: its first page).
    Text,
}

/// A fixed resource, answered by a tool with fixed arguments.
#[derive(Debug)]
pub struct ResourceOffer {
    /// `besluitbron://<connector>/<name>`.
    pub uri: &'static str,
    /// Its short name.
    pub name: &'static str,
    /// What a person sees.
    pub title: &'static str,
    /// What it holds.
    pub description: &'static str,
    /// The tool that answers it.
    pub tool: &'static str,
    /// The tool's arguments, a JSON object.
    pub arguments: &'static str,
    /// How the answer is shown.
    pub shape: Shape,
}

/// A resource template with one variable, which is the same-named argument of its tool.
#[derive(Debug)]
pub struct TemplateOffer {
    /// E.g. `besluitbron://tk/document/{id}`: one variable, the URI's last segment.
    pub uri_template: &'static str,
    /// Its short name.
    pub name: &'static str,
    /// What a person sees.
    pub title: &'static str,
    /// What it holds and where the variable's values come from.
    pub description: &'static str,
    /// The tool that answers it.
    pub tool: &'static str,
    /// How the answer is shown.
    pub shape: Shape,
    /// Completion of the variable, when it takes a reference-list value.
    pub values: Option<Values>,
}

impl TemplateOffer {
    /// The variable's name (between the braces).
    pub fn variable(&self) -> &'static str {
        let (_, rest) = self.uri_template.split_once('{').unwrap_or(("", "}"));
        rest.split_once('}').map_or("", |(name, _)| name)
    }

    fn prefix(&self) -> &'static str {
        self.uri_template.split_once('{').map_or(self.uri_template, |(p, _)| p)
    }

    /// The variable's value in `uri`, when `uri` is of this template: exactly one
    /// percent-decoded segment, neither `.` nor `..`. `Err` for a URI of this template
    /// with a value that is not one.
    pub fn matches(&self, uri: &str) -> Option<Result<String, String>> {
        let raw = uri.strip_prefix(self.prefix())?;
        if raw.is_empty() || raw.contains(['/', '?', '#']) {
            return Some(Err(format!(
                "the {} of {} is one URI segment (percent-encode a `/` as %2F)",
                self.variable(),
                self.uri_template
            )));
        }
        let decoded = match percent_encoding::percent_decode_str(raw).decode_utf8() {
            Ok(d) => d.into_owned(),
            Err(_) => return Some(Err("the URI's percent-encoding is not UTF-8".to_owned())),
        };
        if decoded == "." || decoded == ".." || decoded.trim().is_empty() {
            return Some(Err(format!("`{}` is not a {}", brief(&decoded), self.variable())));
        }
        Some(Ok(decoded))
    }
}

/// A prompt: a research workflow, a short plan that names the cheap tools first.
#[derive(Debug)]
pub struct PromptOffer {
    /// Its name.
    pub name: &'static str,
    /// What a person picks from a menu (Dutch).
    pub title: &'static str,
    /// What it does (English).
    pub description: &'static str,
    /// Its arguments.
    pub arguments: &'static [PromptArg],
    /// The plan, from the arguments given (required ones are present and non-empty).
    pub plan: fn(&PromptArgs) -> String,
}

/// One argument of a prompt.
#[derive(Debug)]
pub struct PromptArg {
    /// Its name.
    pub name: &'static str,
    /// What it is.
    pub description: &'static str,
    /// Whether `prompts/get` needs it.
    pub required: bool,
    /// Completion of its value, when it takes a reference-list value.
    pub values: Option<Values>,
}

/// The arguments a prompt was given, checked.
#[derive(Debug, Default)]
pub struct PromptArgs(pub(crate) BTreeMap<&'static str, String>);

impl PromptArgs {
    /// The value of `name`, if given and not empty.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str).filter(|v| !v.is_empty())
    }

    /// The value of a required argument (present after the check).
    pub fn required(&self, name: &str) -> &str {
        self.get(name).unwrap_or_default()
    }
}

/// One value an argument may take: what is filled in, and a label that is matched too
/// (a source's name, a court's abbreviation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The value.
    pub value: String,
    /// What else it is called.
    pub label: String,
}

/// The future of a fetched completion list.
pub type ChoicesFuture<'a> = Pin<Box<dyn Future<Output = Result<Vec<Choice>, AnswerError>> + Send + 'a>>;

/// Where a completion's values come from.
#[derive(Clone, Copy)]
pub enum Values {
    /// A list BesluitBron knows (no platform call).
    Fixed(fn() -> Vec<Choice>),
    /// A reference list fetched through the platform path as the caller, with the
    /// `PlatformCall` of the tool that lists it (the same buffer key), counted as a call
    /// of that tool.
    Fetched {
        /// The tool that lists it.
        tool: &'static str,
        /// The fetch, within a call of that tool.
        fetch: for<'a> fn(&'a Context, &'a Call) -> ChoicesFuture<'a>,
    },
}

impl std::fmt::Debug for Values {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Values::Fixed(_) => "fixed values",
            Values::Fetched { .. } => "fetched values",
        })
    }
}

/// The choices of a fixed list of strings, each its own label.
pub fn plain_choices(values: &[&str]) -> Vec<Choice> {
    values
        .iter()
        .map(|v| Choice {
            value: (*v).to_owned(),
            label: String::new(),
        })
        .collect()
}

/// Lower case, letters and digits only (accents folded), single spaces.
pub fn words(text: &str) -> String {
    let mapped: String = text
        .chars()
        .map(|c| match c {
            'á' | 'à' | 'â' | 'ä' | 'Á' | 'À' | 'Â' | 'Ä' => 'a',
            'é' | 'è' | 'ê' | 'ë' | 'É' | 'È' | 'Ê' | 'Ë' => 'e',
            'í' | 'ì' | 'î' | 'ï' | 'Í' | 'Ì' | 'Î' | 'Ï' => 'i',
            'ó' | 'ò' | 'ô' | 'ö' | 'Ó' | 'Ò' | 'Ô' | 'Ö' => 'o',
            'ú' | 'ù' | 'û' | 'ü' | 'Ú' | 'Ù' | 'Û' | 'Ü' => 'u',
            c if c.is_alphanumeric() => c.to_lowercase().next().unwrap_or(c),
            _ => ' ',
        })
        .collect();
    mapped.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What an asked value of a reference list is: the value itself (any case), or the one
/// choice whose value or name it spells (case, accents and punctuation aside), or the one
/// whose name holds its words as whole words. Otherwise the candidates: those that hold
/// the words (at most 8, shortest name first), or else the nearest names (5).
pub fn resolve_choice<'a>(choices: &'a [Choice], asked: &str) -> Result<String, Vec<&'a Choice>> {
    let asked = asked.trim();
    if let Some(c) = choices.iter().find(|c| c.value.eq_ignore_ascii_case(asked)) {
        return Ok(c.value.clone());
    }
    let wanted = words(asked);
    let spelled: Vec<&Choice> = choices
        .iter()
        .filter(|c| words(&c.value) == wanted || words(&c.label) == wanted)
        .collect();
    if let [one] = spelled.as_slice() {
        return Ok(one.value.clone());
    }
    let holds = |hay: &str| !wanted.is_empty() && format!(" {} ", words(hay)).contains(&format!(" {wanted} "));
    let mut fits: Vec<&Choice> = choices.iter().filter(|c| holds(&c.label) || holds(&c.value)).collect();
    match fits.len() {
        1 => Ok(fits[0].value.clone()),
        0 => {
            let mut near: Vec<(f64, &Choice)> = choices
                .iter()
                .map(|c| (strsim::jaro_winkler(&words(&c.label), &wanted), c))
                .collect();
            near.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.value.cmp(&b.1.value)));
            Err(near.into_iter().take(5).map(|(_, c)| c).collect())
        }
        _ => {
            fits.sort_by_key(|c| (c.label.len(), c.value.clone()));
            fits.truncate(8);
            Err(fits)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_takes_exactly_one_segment() {
        let t = TemplateOffer {
            uri_template: "besluitbron://ori/document/{id}",
            name: "d",
            title: "d",
            description: "d",
            tool: "ori_document",
            shape: Shape::Text,
            values: None,
        };
        assert_eq!(t.variable(), "id");
        assert_eq!(
            t.matches("besluitbron://ori/document/ori_x%2F1001"),
            Some(Ok("ori_x/1001".to_owned()))
        );
        assert!(t.matches("besluitbron://tk/document/x").is_none());
        for bad in ["", "a/b", "..", "%2E%2E", ".", "a?b", "%FF"] {
            let uri = format!("besluitbron://ori/document/{bad}");
            assert!(matches!(t.matches(&uri), Some(Err(_))), "{bad}");
        }
    }
}
