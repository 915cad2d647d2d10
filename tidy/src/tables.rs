//! The findings the rules let stand, in two tables kept apart:
//! - [`EXCEPTIONS`]: functions that read better whole than split, at most
//!   [`EXCEPTIONS_MAX`], each with its reason;
//! - [`OWED_BY_THE_REGISTRY_REFACTOR`]: what is wrong in the files the connector-registry
//!   refactoring is rewriting now, each entry with what will resolve it. The refactoring
//!   strikes its entries as it lands; the table then is empty and goes. Nothing else is
//!   owed: every other finding fails the rule's test.
//!
//! Neither table can rot: an entry that no finding matches any more fails the test as well,
//! so it is struck when the function is split or the file fixed.

use crate::{Finding, Rule};

/// The most entries [`EXCEPTIONS`] may hold.
pub const EXCEPTIONS_MAX: usize = 5;

/// A function allowed over [`crate::FUNCTION_LINES_MAX`] lines.
#[derive(Debug)]
pub struct Exception {
    /// The file, under the workspace root.
    pub file: &'static str,
    /// The function, as the finding names it (`Type::name` for a method).
    pub function: &'static str,
    /// Why it reads better whole.
    pub reason: &'static str,
}

/// What a file owes a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owes {
    /// The function, by name, is too long.
    LongFunction(&'static str),
    LongFile,
    /// The file is in an import cycle; cycles are looked for without its imports.
    Cycle,
    /// The file's comments cite issue numbers.
    IssueNumber,
}

/// A finding in a file under another piece of work, and what will resolve it.
#[derive(Debug)]
pub struct Owed {
    /// The file, under the workspace root.
    pub file: &'static str,
    pub owes: Owes,
    /// What will resolve it, in a line.
    pub resolves: &'static str,
}

/// Functions that read better whole.
pub const EXCEPTIONS: &[Exception] = &[
    Exception {
        file: "server/src/metrics/mod.rs",
        function: "Metrics::new",
        reason: "registers every metric family, one statement each: a table, read down, not a procedure",
    },
    Exception {
        file: "server/src/platforms/rechtspraak/body.rs",
        function: "Writer::element",
        reason: "one match over the ruling's element names, a few lines an arm: a table, read down",
    },
];

/// What the files under the connector-registry refactoring owe the rules.
pub const OWED_BY_THE_REGISTRY_REFACTOR: &[Owed] = &[
    Owed {
        file: "server/src/connectors/mod.rs",
        owes: Owes::Cycle,
        resolves: "the registry names every connector and each takes `ConnectorSpec` from it: the spec in a module of its own below both",
    },
    Owed {
        file: "server/src/connectors/mod.rs",
        owes: Owes::IssueNumber,
        resolves: "the comment on `entityId` says what was found instead of the issue that found it",
    },
    Owed {
        file: "server/src/connectors/bwb/mod.rs",
        owes: Owes::Cycle,
        resolves: "bwb's `mod.rs` takes `ConnectorSpec` and `Sample` from the registry, which names it: the spec in a module of its own below both",
    },
    Owed {
        file: "server/src/connectors/cvdr/mod.rs",
        owes: Owes::Cycle,
        resolves: "cvdr's `mod.rs` takes `ConnectorSpec` and `Sample` from the registry, which names it: the spec in a module of its own below both",
    },
    Owed {
        file: "server/src/page/status.rs",
        owes: Owes::Cycle,
        resolves: "the status page takes `PageState` from `page/mod.rs`, which routes to it: the state in a child of its own",
    },
    Owed {
        file: "server/src/platforms/bwb/wire.rs",
        owes: Owes::IssueNumber,
        resolves: "the comment on a cut-off answer says the reason without the issue number",
    },
    Owed {
        file: "server/src/platforms/koop/regulation.rs",
        owes: Owes::LongFile,
        resolves: "the regulation reader split by concern (articles, blocks, tables) as the KOOP family's client is shared",
    },
    Owed {
        file: "server/src/platforms/koop/regulation.rs",
        owes: Owes::LongFunction("Reading::open"),
        resolves: "a start tag's role decided in one step, each role that opens a block in its own",
    },
    Owed {
        file: "server/src/config.rs",
        owes: Owes::LongFile,
        resolves: "each connector's settings move beside its connector; what stays is the shared settings",
    },
    Owed {
        file: "sim/fakes/src/sru.rs",
        owes: Owes::LongFile,
        resolves: "the SRU fake split by concern (query, records, the services) as the KOOP family's fakes are shared",
    },
];

impl Owed {
    /// Whether this entry lets `finding` stand.
    pub fn excuses(&self, finding: &Finding) -> bool {
        self.file == finding.file
            && match (self.owes, &finding.rule) {
                (Owes::LongFunction(name), Rule::LongFunction(found)) => name == found,
                (Owes::LongFile, Rule::LongFile) | (Owes::IssueNumber, Rule::IssueNumber) => true,
                _ => false,
            }
    }
}

impl Exception {
    /// Whether this exception lets `finding` stand.
    pub fn excuses(&self, finding: &Finding) -> bool {
        self.file == finding.file && finding.rule == Rule::LongFunction(self.function.to_owned())
    }
}

/// What is wrong once the tables have had their say: each finding neither table excuses,
/// and each entry of `exceptions` and `owed` that excuses none of `findings` (so the
/// caller passes only the entries of the rule whose findings these are).
pub fn judge(findings: &[Finding], exceptions: &[Exception], owed: &[&Owed]) -> Vec<String> {
    let mut out: Vec<String> = findings
        .iter()
        .filter(|f| !exceptions.iter().any(|e| e.excuses(f)) && !owed.iter().any(|o| o.excuses(f)))
        .map(Finding::to_string)
        .collect();
    for e in exceptions.iter().filter(|e| !findings.iter().any(|f| e.excuses(f))) {
        out.push(format!(
            "{}: fn {} is excepted but is no longer over {} lines (or is gone): strike it from EXCEPTIONS",
            e.file,
            e.function,
            crate::FUNCTION_LINES_MAX
        ));
    }
    for o in owed.iter().filter(|o| !findings.iter().any(|f| o.excuses(f))) {
        out.push(format!(
            "{}: owes {:?} no more: strike the entry from its table",
            o.file, o.owes
        ));
    }
    out
}

/// The entries of [`OWED_BY_THE_REGISTRY_REFACTOR`] that `keep` picks.
pub fn owed(keep: impl Fn(&Owes) -> bool) -> Vec<&'static Owed> {
    OWED_BY_THE_REGISTRY_REFACTOR.iter().filter(|o| keep(&o.owes)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn long(file: &str, name: &str) -> Finding {
        Finding {
            file: file.to_owned(),
            line: 3,
            krate: "c".to_owned(),
            rule: Rule::LongFunction(name.to_owned()),
            message: format!("fn {name} is long"),
        }
    }

    #[test]
    fn an_entry_excuses_its_finding_and_a_stale_entry_is_a_fault() {
        let exceptions = [Exception {
            file: "c/src/a.rs",
            function: "table",
            reason: "a table, read down",
        }];
        let owed = Owed {
            file: "c/src/b.rs",
            owes: Owes::LongFunction("T::new"),
            resolves: "the refactoring splits it",
        };
        let findings = [long("c/src/a.rs", "table"), long("c/src/b.rs", "T::new")];
        assert_eq!(judge(&findings, &exceptions, &[&owed]), Vec::<String>::new());
        let findings = [long("c/src/a.rs", "table"), long("c/src/b.rs", "other")];
        assert_eq!(
            judge(&findings, &exceptions, &[&owed]),
            [
                "c: c/src/b.rs:3: fn other is long",
                "c/src/b.rs: owes LongFunction(\"T::new\") no more: strike the entry from its table"
            ]
        );
        assert_eq!(
            judge(&[], &exceptions, &[]),
            [
                "c/src/a.rs: fn table is excepted but is no longer over 100 lines (or is gone): strike it from EXCEPTIONS"
            ]
        );
    }
}
