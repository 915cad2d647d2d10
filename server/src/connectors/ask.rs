//! How a tool's argument that may name several things is resolved to choices a person
//! can be asked to make: declared by the connector on its tool (`ToolSpec::asks`),
//! read by the MCP layer (`crate::mcp::ask`), which names no platform and no tool.
//!
//! A declaration says which argument, what it names ("organisations", "members") and
//! how a value of it is read: [`Resolution::Exact`] (one thing), [`Resolution::Choices`]
//! (several, each with the value that names it alone and what a person reads) or
//! [`Resolution::Unknown`] (nothing, or the list is out of reach: the tool answers as
//! it would). A resolver reads only the lists BesluitBron holds ([`Resolver::Held`]) or
//! the reference list the tool reads itself, through that list tool's own platform call
//! and buffer key ([`Resolver::Listed`]): never the search the tool makes.
//!
//! What this module does not do: ask anyone (the MCP layer does), or resolve a name
//! (each connector's own list does).

use std::future::Future;
use std::pin::Pin;

use super::offers::Choice;
use crate::call::{Call, Context};

/// What a value of an argument names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolution {
    /// One thing: the tool takes the value as it is.
    Exact,
    /// Several things, best first: each choice's `value` names it alone, its `label`
    /// is what a person reads.
    Choices(Vec<Choice>),
    /// Nothing known, or the list is out of reach: the tool answers as it does.
    Unknown,
}

/// The future of a resolution against a fetched list.
pub type ResolveFuture<'a> = Pin<Box<dyn Future<Output = Resolution> + Send + 'a>>;

/// Where an argument's value is resolved.
#[derive(Clone, Copy)]
pub enum Resolver {
    /// Against a list BesluitBron holds (no platform call).
    Held(fn(&str) -> Resolution),
    /// Against a reference list read through the platform path as the caller, with the
    /// `PlatformCall` of the tool that lists it (the same buffer key the tool reads),
    /// counted as a call of that tool.
    Listed {
        /// The tool that lists it.
        tool: &'static str,
        /// The resolution, within a call of that tool.
        resolve: for<'a> fn(&'a Context, &'a Call, &'a str) -> ResolveFuture<'a>,
    },
}

impl std::fmt::Debug for Resolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Resolver::Held(_) => f.write_str("held list"),
            Resolver::Listed { tool, .. } => write!(f, "list of {tool}"),
        }
    }
}

/// One argument of a tool whose value may name several things.
#[derive(Clone, Copy, Debug)]
pub struct AskArg {
    /// The argument (a string).
    pub argument: &'static str,
    /// What it names, in the plural a question uses: "organisations", "members".
    pub names: &'static str,
    /// How a value is resolved.
    pub resolver: Resolver,
}

/// The resolution of a candidate list: several are [`Resolution::Choices`] (one is
/// [`Resolution::Exact`], none [`Resolution::Unknown`]).
pub fn of_candidates(choices: Vec<Choice>) -> Resolution {
    match choices.len() {
        0 => Resolution::Unknown,
        1 => Resolution::Exact,
        _ => Resolution::Choices(choices),
    }
}
