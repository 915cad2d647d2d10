//! How long each function is: every `fn` item, impl method and trait method with a body,
//! test code included, and those written inside a macro's body when the body reads as
//! items (`quickcheck! { fn qc_… }`). A function spans the lines from its `fn` keyword to
//! its closing brace, both counted; attributes and doc comments above it do not count.
//!
//! Invariants: a function inside another is counted on its own and within the outer one;
//! closures are not functions here. What it does not do: judge. [`crate::Finding`]s are
//! made by the rule that reads these lengths.

use proc_macro2::Span;
use syn::visit::Visit;

/// A function found in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    /// `name`, or `Type::name` for a method (the type an `impl` is for, or the trait).
    pub name: String,
    /// The line of its `fn` keyword.
    pub line: usize,
    /// Lines from the `fn` line to the closing-brace line, both counted.
    pub lines: usize,
}

/// Every function with a body in `file`, in the order they start.
pub fn functions(file: &syn::File) -> Vec<Function> {
    let mut finder = Finder::default();
    finder.visit_file(file);
    finder.found.sort_by_key(|f| f.line);
    finder.found
}

#[derive(Default)]
struct Finder {
    /// The type of the `impl` or the trait being read, if any.
    owner: Vec<String>,
    found: Vec<Function>,
}

impl Finder {
    fn push(&mut self, name: &syn::Ident, fn_token: Span, close: Span) {
        let name = match self.owner.last() {
            Some(owner) => format!("{owner}::{name}"),
            None => name.to_string(),
        };
        let line = fn_token.start().line;
        self.found.push(Function {
            name,
            line,
            lines: close.end().line - line + 1,
        });
    }
}

impl<'ast> Visit<'ast> for Finder {
    fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
        // A function inside a method is not the method's type's.
        let owner = std::mem::take(&mut self.owner);
        self.push(
            &item.sig.ident,
            item.sig.fn_token.span,
            item.block.brace_token.span.close(),
        );
        syn::visit::visit_item_fn(self, item);
        self.owner = owner;
    }

    fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
        self.owner.push(type_name(&item.self_ty));
        syn::visit::visit_item_impl(self, item);
        self.owner.pop();
    }

    fn visit_item_trait(&mut self, item: &'ast syn::ItemTrait) {
        self.owner.push(item.ident.to_string());
        syn::visit::visit_item_trait(self, item);
        self.owner.pop();
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        self.push(
            &item.sig.ident,
            item.sig.fn_token.span,
            item.block.brace_token.span.close(),
        );
        syn::visit::visit_impl_item_fn(self, item);
    }

    fn visit_trait_item_fn(&mut self, item: &'ast syn::TraitItemFn) {
        if let Some(body) = &item.default {
            self.push(&item.sig.ident, item.sig.fn_token.span, body.brace_token.span.close());
        }
        syn::visit::visit_trait_item_fn(self, item);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        // A macro whose body is items (`quickcheck! { … }`): its functions count too.
        if let Ok(inner) = syn::parse2::<syn::File>(mac.tokens.clone()) {
            let owner = std::mem::take(&mut self.owner);
            self.visit_file(&inner);
            self.owner = owner;
        }
    }
}

/// The name of the type an `impl` is for: the last segment of its path.
fn type_name(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default(),
        syn::Type::Reference(r) => type_name(&r.elem),
        _ => "_".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<(String, usize, usize)> {
        let file = syn::parse_file(text).expect("the fixture parses");
        functions(&file)
            .into_iter()
            .map(|f| (f.name, f.line, f.lines))
            .collect()
    }

    /// Braces in literals and comments do not count, a declaration without a body is no
    /// function, methods carry their type, and test code counts as any other.
    #[test]
    fn the_reader_counts_what_the_compiler_sees() {
        let text = r####"
fn short() -> &'static str {
    let _c = '{';
    // a { in a comment
    /* and { in /* a nested */ block */
    let _r = r#"a "{" raw"#;
    "}"
}

trait T {
    fn declared(&self);
    fn given<'a>(&'a self, _x: [u8; 2]) -> &'a str {
        "x"
    }
}

impl<'a> T for &'a Short {
    fn declared(&self) {}
}

#[cfg(test)]
mod tests {
    fn inside_tests() {
        fn nested() {}
    }
}

quickcheck::quickcheck! {
    fn qc_holds(x: u8) -> bool {
        x == x
    }
}
"####;
        assert_eq!(
            found(text),
            [
                ("short".to_owned(), 2, 7),
                ("T::given".to_owned(), 12, 3),
                ("Short::declared".to_owned(), 18, 1),
                ("inside_tests".to_owned(), 23, 3),
                ("nested".to_owned(), 24, 1),
                ("qc_holds".to_owned(), 29, 3),
            ]
        );
    }
}
