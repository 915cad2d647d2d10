//! The findings the rules let stand, in two tables kept apart:
//! - [`EXCEPTIONS`]: functions that read better whole than split, at most
//!   [`EXCEPTIONS_MAX`], each with its reason;
//! - [`OWED_BY_THE_REGISTRY_REFACTOR`]: what is wrong in the files the connector-registry
//!   refactoring is rewriting now, each entry with what will resolve it. The refactoring
//!   strikes its entries as it lands; the table then is empty and goes;
//! - [`NOT_YET_SPLIT`]: the rest of what the workspace owes, each entry with what will
//!   resolve it; debt, not exceptions.
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

/// What this workspace still owes the rules outside the registry refactoring: functions
/// and files not yet split and cycles not yet taken apart. Not exceptions: each entry is
/// debt with what will pay it, struck when it is paid, and the table goes when empty.
pub const NOT_YET_SPLIT: &[Owed] = &[
    Owed {
        file: "server/src/connectors/obv/mod.rs",
        owes: Owes::Cycle,
        resolves: "obv's `mod.rs` and its ids, offers and page use each other: the id reader beside `CONNECTOR` and what the children take from `mod.rs` in a child of its own, as for ob, ori and tk",
    },
    Owed {
        file: "server/src/connectors/opentk/mod.rs",
        owes: Owes::Cycle,
        resolves: "the id reader, which runs the tools in `mod.rs`, beside `CONNECTOR`, its parsing left in `ids.rs`, as for ob and ori",
    },
    Owed {
        file: "server/src/connectors/rechtspraak/mod.rs",
        owes: Owes::Cycle,
        resolves: "the id reader beside `CONNECTOR`; the list calls the offers take (`courts_call`, `areas_call`) in a child of their own",
    },
    Owed {
        file: "server/src/connectors/tk/mod.rs",
        owes: Owes::Cycle,
        resolves: "the list calls the offers and page take (`PLATFORM`, `committees_call`, `factions_call`) in a child of their own",
    },
    Owed {
        file: "core/src/path/mod.rs",
        owes: Owes::LongFile,
        resolves: "the path's lanes, flights and retries each in a room of `path/`",
    },
    Owed {
        file: "server/src/connectors/obv/render.rs",
        owes: Owes::LongFile,
        resolves: "the answers rendered in `render/`, one room per answer (search, document, lists)",
    },
    Owed {
        file: "server/src/connectors/rechtspraak/render.rs",
        owes: Owes::LongFile,
        resolves: "the answers rendered in `render/`, one room per answer (search, ruling, lists)",
    },
    Owed {
        file: "server/src/connectors/tk/votes.rs",
        owes: Owes::LongFile,
        resolves: "`votes/`: the arguments, the fetch of cases and votes, and the rendering each in a room",
    },
    Owed {
        file: "server/src/guard.rs",
        owes: Owes::LongFile,
        resolves: "`guard/`: service, steps, envelope, origin and permits each in a room",
    },
    Owed {
        file: "server/src/platforms/tk/mod.rs",
        owes: Owes::LongFile,
        resolves: "the Kamer client by resource (documents, cases, meetings) in rooms of `platforms/tk/`",
    },
    Owed {
        file: "server/src/platforms/tk/vlos.rs",
        owes: Owes::LongFile,
        resolves: "the VLOS report reader by part (speakers, activities, the text) in `vlos/`",
    },
    Owed {
        file: "server/tests/cluster_owner.rs",
        owes: Owes::LongFile,
        resolves: "split by concern into several files of the same test binary (a plain move)",
    },
    Owed {
        file: "server/tests/mcp.rs",
        owes: Owes::LongFile,
        resolves: "split by concern into several files of the same test binary (a plain move)",
    },
    Owed {
        file: "sim/src/cluster/mod.rs",
        owes: Owes::LongFile,
        resolves: "the cluster simulator's event handling in a room of its own",
    },
    Owed {
        file: "sim/src/scenario.rs",
        owes: Owes::LongFile,
        resolves: "the scenario file's parsing and the workload generator apart",
    },
    Owed {
        file: "sim/fakes/src/rechtspraak_corpus.rs",
        owes: Owes::LongFile,
        resolves: "the ruling generator and its XML apart from the corpus",
    },
    Owed {
        file: "core/src/path/invariants.rs",
        owes: Owes::LongFunction("PlatformPath::check_invariants"),
        resolves: "its steps named, each a function the body calls in turn",
    },
    Owed {
        file: "core/src/scheduler/invariants.rs",
        owes: Owes::LongFunction("FairScheduler::check_invariants"),
        resolves: "its steps named, each a function the body calls in turn",
    },
    Owed {
        file: "core/tests/lease_props.rs",
        owes: Owes::LongFunction("run"),
        resolves: "its setup and each phase's checks as named helpers beside it, the assertions unchanged",
    },
    Owed {
        file: "core/tests/path_props.rs",
        owes: Owes::LongFunction("run"),
        resolves: "its setup and each phase's checks as named helpers beside it, the assertions unchanged",
    },
    Owed {
        file: "core/tests/support/mod.rs",
        owes: Owes::LongFunction("drive"),
        resolves: "its setup and each phase's checks as named helpers beside it, the assertions unchanged",
    },
    Owed {
        file: "server/src/connectors/rechtspraak/mod.rs",
        owes: Owes::LongFunction("rechtspraak_search"),
        resolves: "its steps named, each a function the body calls in turn",
    },
    Owed {
        file: "server/src/connectors/schema.rs",
        owes: Owes::LongFunction("portable_schema"),
        resolves: "its steps named, each a function the body calls in turn",
    },
    Owed {
        file: "server/src/connectors/tk/debates.rs",
        owes: Owes::LongFunction("tk_debates"),
        resolves: "its steps named, each a function the body calls in turn",
    },
    Owed {
        file: "server/src/connectors/tk/transcript.rs",
        owes: Owes::LongFunction("render"),
        resolves: "its steps named, each a function the body calls in turn",
    },
    Owed {
        file: "server/src/connectors/tk/votes.rs",
        owes: Owes::LongFunction("fetch"),
        resolves: "its steps named, each a function the body calls in turn",
    },
    Owed {
        file: "server/src/text/rtf.rs",
        owes: Owes::LongFunction("read_rtf"),
        resolves: "its steps named, each a function the body calls in turn",
    },
    Owed {
        file: "server/tests/answers.rs",
        owes: Owes::LongFunction("every_default_answer_fits_the_budget_and_every_answer_its_output_schema"),
        resolves: "its setup and each phase's checks as named helpers beside it, the assertions unchanged",
    },
    Owed {
        file: "server/tests/auth.rs",
        owes: Owes::LongFunction("required_mode_serves_valid_tokens_only_and_no_token_reaches_a_platform"),
        resolves: "its setup and each phase's checks as named helpers beside it, the assertions unchanged",
    },
    Owed {
        file: "server/tests/browser.rs",
        owes: Owes::LongFunction("the_search_page_works_in_a_real_browser"),
        resolves: "its setup and each phase's checks as named helpers beside it, the assertions unchanged",
    },
    Owed {
        file: "server/tests/differential.rs",
        owes: Owes::LongFunction("server_log"),
        resolves: "its setup and each phase's checks as named helpers beside it, the assertions unchanged",
    },
    Owed {
        file: "server/tests/differential.rs",
        owes: Owes::LongFunction("leases"),
        resolves: "its setup and each phase's checks as named helpers beside it, the assertions unchanged",
    },
    Owed {
        file: "server/tests/limits.rs",
        owes: Owes::LongFunction("a_waiting_call_reports_progress_and_a_cancelled_one_is_withdrawn"),
        resolves: "its setup and each phase's checks as named helpers beside it, the assertions unchanged",
    },
    Owed {
        file: "server/tests/mcp.rs",
        owes: Owes::LongFunction("fetch_reads_each_platforms_ids_with_the_text_its_own_tool_gives"),
        resolves: "its setup and each phase's checks as named helpers beside it, the assertions unchanged",
    },
    Owed {
        file: "server/tests/offers.rs",
        owes: Owes::LongFunction("lists_with_caching_hints_and_capabilities_in_both_eras"),
        resolves: "its setup and each phase's checks as named helpers beside it, the assertions unchanged",
    },
    Owed {
        file: "server/tests/offers.rs",
        owes: Owes::LongFunction("prompts_give_a_plan_and_refuse_bad_arguments"),
        resolves: "its setup and each phase's checks as named helpers beside it, the assertions unchanged",
    },
    Owed {
        file: "server/tests/offers.rs",
        owes: Owes::LongFunction("regression_issue_31_odd_reads_completions_and_prompts_are_clear_errors"),
        resolves: "its setup and each phase's checks as named helpers beside it, the assertions unchanged",
    },
    Owed {
        file: "server/tests/recording.rs",
        owes: Owes::LongFunction("record"),
        resolves: "its setup and each phase's checks as named helpers beside it, the assertions unchanged",
    },
    Owed {
        file: "server/tests/recording.rs",
        owes: Owes::LongFunction("the_server_records_both_eras_and_the_simulator_replays_the_file"),
        resolves: "its setup and each phase's checks as named helpers beside it, the assertions unchanged",
    },
    Owed {
        file: "server/tests/sigkill_server.rs",
        owes: Owes::LongFunction("regression_issue_31_killed_during_buffer_writes_five_times_the_buffer_holds"),
        resolves: "its setup and each phase's checks as named helpers beside it, the assertions unchanged",
    },
    Owed {
        file: "server/tests/tk_votes.rs",
        owes: Owes::LongFunction("a_case_voted_twice_gives_a_show_of_hands_with_a_mistake_and_a_roll_call"),
        resolves: "its setup and each phase's checks as named helpers beside it, the assertions unchanged",
    },
    Owed {
        file: "sim/src/cluster/mod.rs",
        owes: Owes::LongFunction("Sim::handle"),
        resolves: "its steps named, each a function the body calls in turn",
    },
    Owed {
        file: "sim/src/engine/fair.rs",
        owes: Owes::LongFunction("Engine::drain_events"),
        resolves: "its steps named, each a function the body calls in turn",
    },
    Owed {
        file: "sim/src/replicas.rs",
        owes: Owes::LongFunction("what_if"),
        resolves: "its steps named, each a function the body calls in turn",
    },
    Owed {
        file: "sim/src/report.rs",
        owes: Owes::LongFunction("Report::render"),
        resolves: "its steps named, each a function the body calls in turn",
    },
    Owed {
        file: "sim/fakes/src/obv_corpus.rs",
        owes: Owes::LongFunction("ObvCorpus::generate"),
        resolves: "its steps named, each a function the body calls in turn",
    },
    Owed {
        file: "sim/fakes/src/rechtspraak_corpus.rs",
        owes: Owes::LongFunction("RsCorpus::content_xml"),
        resolves: "its steps named, each a function the body calls in turn",
    },
    Owed {
        file: "sim/fakes/src/rechtspraak_corpus.rs",
        owes: Owes::LongFunction("Generator::ruling"),
        resolves: "its steps named, each a function the body calls in turn",
    },
    Owed {
        file: "sim/fakes/src/tk.rs",
        owes: Owes::LongFunction("collection"),
        resolves: "its steps named, each a function the body calls in turn",
    },
    Owed {
        file: "sim/fakes/src/tk_debates.rs",
        owes: Owes::LongFunction("generate"),
        resolves: "its steps named, each a function the body calls in turn",
    },
    Owed {
        file: "sim/fakes/src/tk_debates.rs",
        owes: Owes::LongFunction("motions"),
        resolves: "its steps named, each a function the body calls in turn",
    },
    Owed {
        file: "sim/fakes/src/tk_votes.rs",
        owes: Owes::LongFunction("generate"),
        resolves: "its steps named, each a function the body calls in turn",
    },
    Owed {
        file: "benches/load/drive.rs",
        owes: Owes::LongFunction("drive"),
        resolves: "its steps named, each a function the body calls in turn",
    },
    Owed {
        file: "benches/load/main.rs",
        owes: Owes::LongFunction("run"),
        resolves: "its steps named, each a function the body calls in turn",
    },
    Owed {
        file: "benches/load/replicas.rs",
        owes: Owes::LongFunction("Report::print"),
        resolves: "its steps named, each a function the body calls in turn",
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

/// The entries of [`OWED_BY_THE_REGISTRY_REFACTOR`] and [`NOT_YET_SPLIT`] that `keep`
/// picks.
pub fn owed(keep: impl Fn(&Owes) -> bool) -> Vec<&'static Owed> {
    OWED_BY_THE_REGISTRY_REFACTOR
        .iter()
        .chain(NOT_YET_SPLIT)
        .filter(|o| keep(&o.owes))
        .collect()
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
