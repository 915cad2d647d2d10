//! What `pdf-extract` would recurse through, checked before it does: [`check`].
//!
//! `pdf-extract` follows a page's `/Parent` chain for inherited attributes and draws a
//! form XObject (a "drawing", `Do`) by reading its content recursively, with no guard
//! against a loop or a depth: a page that is its own parent, or a drawing that draws
//! itself (directly or through others), recursed until the thread's stack overflowed,
//! which aborts the whole process — no `catch_unwind` stops that. This walks
//! the same structure first, with a bound on everything:
//!
//! Invariants:
//! - A `/Parent` chain that comes back to a page tree node it passed is
//!   [`TextError::Malformed`]; one longer than [`Caps::max_depth`] is [`TextError::TooDeep`].
//! - A drawing that draws one of the drawings it is drawn from is [`TextError::Malformed`];
//!   drawings nested deeper than [`Caps::max_depth`] are [`TextError::TooDeep`].
//! - A page that would make `pdf-extract` draw more than [`MAX_DRAWINGS_PER_PAGE`]
//!   drawings (counted as `pdf-extract` draws them: a drawing drawn twice counts twice) is
//!   [`TextError::Malformed`]; the walk stops there, so its own work is bounded too.
//! - A page whose `/Contents` names an object the file does not hold (never written, or
//!   listed inside an object stream that cannot hold it, such as itself) is
//!   [`TextError::Malformed`], not a page without text.
//! - The deadline is checked at every drawing.
//!
//! What this does not do: read text, or judge anything `pdf-extract` does not recurse
//! through (its own errors and panics are the caller's, as before).

use std::collections::BTreeMap;

use pdf_extract::content::Content;
use pdf_extract::{Dictionary, Document, Object, ObjectId};

use super::types::{Caps, Deadline, Format, TextError};

/// The most drawings (form XObjects, at every depth, each time it is drawn) one page may
/// draw: far beyond a real document's, and the bound on the work a file built to make the
/// reader draw without end can cause.
pub const MAX_DRAWINGS_PER_PAGE: u64 = 10_000;

/// Checks every page of `doc` as described in the module's documentation.
pub fn check(doc: &Document, caps: &Caps, deadline: &Deadline) -> Result<(), TextError> {
    let mut names = BTreeMap::new();
    for page in doc.get_pages().into_values() {
        deadline.check()?;
        let chain = parents(doc, page, caps.max_depth)?;
        if let Some(page) = chain.first() {
            contents_found(doc, page)?;
        }
        let Some(resources) = chain.iter().find_map(|d| dictionary(doc, d.get(b"Resources").ok()?)) else {
            continue;
        };
        let Ok(content) = doc.get_page_content(page) else {
            continue;
        };
        let mut walk = Walk {
            doc,
            caps,
            deadline,
            path: Vec::new(),
            drawn: 0,
            names: &mut names,
        };
        walk.draw(&drawn_names(&content), resources)?;
    }
    Ok(())
}

/// Every object a page's `/Contents` names exists: one that does not (never written, or
/// listed in an object stream that cannot hold it, such as itself) would leave the page
/// without text, read as a scan.
fn contents_found(doc: &Document, page: &Dictionary) -> Result<(), TextError> {
    let refs = match page.get(b"Contents") {
        Ok(Object::Reference(id)) => vec![*id],
        Ok(Object::Array(items)) => items.iter().filter_map(|o| o.as_reference().ok()).collect(),
        _ => Vec::new(),
    };
    if refs.iter().any(|id| doc.get_object(*id).is_err()) {
        return Err(malformed("a page's contents are missing"));
    }
    Ok(())
}

/// The dictionaries from `page` up its `/Parent` chain (the page's first).
fn parents(doc: &Document, page: ObjectId, max_depth: usize) -> Result<Vec<&Dictionary>, TextError> {
    let mut chain: Vec<(ObjectId, &Dictionary)> = Vec::new();
    let mut id = page;
    while let Ok(dict) = doc.get_dictionary(id) {
        if chain.iter().any(|(seen, _)| *seen == id) {
            return Err(malformed("its page tree loops"));
        }
        if chain.len() >= max_depth {
            return Err(TextError::TooDeep { limit: max_depth });
        }
        chain.push((id, dict));
        match dict.get(b"Parent").and_then(Object::as_reference) {
            Ok(parent) => id = parent,
            Err(_) => break,
        }
    }
    Ok(chain.into_iter().map(|(_, d)| d).collect())
}

/// The walk over one page's drawings.
struct Walk<'d, 'n> {
    doc: &'d Document,
    caps: &'d Caps,
    deadline: &'d Deadline,
    /// The drawings being drawn, outermost first.
    path: Vec<ObjectId>,
    /// Drawings drawn on this page so far.
    drawn: u64,
    /// The names each drawing's content draws, read once per file.
    names: &'n mut BTreeMap<ObjectId, Vec<Vec<u8>>>,
}

impl<'d> Walk<'d, '_> {
    /// Draws the XObjects named `names` from `resources`, as `pdf-extract` would.
    fn draw(&mut self, names: &[Vec<u8>], resources: &'d Dictionary) -> Result<(), TextError> {
        let Some(xobjects) = resources.get(b"XObject").ok().and_then(|o| dictionary(self.doc, o)) else {
            return Ok(());
        };
        for name in names {
            let Ok(id) = xobjects.get(name).and_then(Object::as_reference) else {
                continue;
            };
            self.deadline.check()?;
            if self.path.contains(&id) {
                return Err(malformed("a drawing in it draws itself"));
            }
            if self.path.len() >= self.caps.max_depth {
                return Err(TextError::TooDeep {
                    limit: self.caps.max_depth,
                });
            }
            self.drawn += 1;
            if self.drawn > MAX_DRAWINGS_PER_PAGE {
                return Err(malformed("a page draws its drawings without end"));
            }
            let Ok(stream) = self.doc.get_object(id).and_then(Object::as_stream) else {
                continue;
            };
            // A drawing without resources of its own draws from its caller's.
            let own = stream
                .dict
                .get(b"Resources")
                .ok()
                .and_then(|o| dictionary(self.doc, o))
                .unwrap_or(resources);
            let inner = self
                .names
                .entry(id)
                .or_insert_with(|| {
                    let content = stream.decompressed_content().unwrap_or_else(|_| stream.content.clone());
                    drawn_names(&content)
                })
                .clone();
            self.path.push(id);
            self.draw(&inner, own)?;
            self.path.pop();
        }
        Ok(())
    }
}

/// The names a content stream draws with `Do`, in order (none if it does not parse:
/// `pdf-extract` fails on it then, without recursing).
fn drawn_names(content: &[u8]) -> Vec<Vec<u8>> {
    let Ok(content) = Content::decode(content) else {
        return Vec::new();
    };
    content
        .operations
        .iter()
        .filter(|op| op.operator == "Do")
        .filter_map(|op| op.operands.first()?.as_name().ok().map(<[u8]>::to_vec))
        .collect()
}

/// `object` as a dictionary, through a reference.
fn dictionary<'d>(doc: &'d Document, object: &'d Object) -> Option<&'d Dictionary> {
    doc.dereference(object).ok()?.1.as_dict().ok()
}

fn malformed(detail: &str) -> TextError {
    TextError::Malformed {
        format: Format::Pdf,
        detail: detail.to_owned(),
    }
}
