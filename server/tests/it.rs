//! The server's integration tests, built as one binary: each file beside this one is a
//! module here, and `support` holds the helpers they share (linking a binary per
//! file cost more than running the tests). Three files are binaries of their own, each
//! for the reason written above its `[[test]]` in `Cargo.toml`: `hostile_platforms`,
//! `cluster_hostile` and `text_hostile` assert the peak resident memory of their process,
//! which the other tests would add to.
//!
//! The tests here share one process and run side by side, so none may depend on being
//! alone in it. What they share, and why it is safe:
//! - every server, fake, redis-server and data directory is a test's own (`127.0.0.1:0`,
//!   `support::temp_dir` unique within the process, a unix socket in it);
//! - children (`besluitbron serve`, `redis-server`, chromium) are started and killed by
//!   the test that owns them, never the test process itself;
//! - the text extraction pool (`ExtractPool::shared`) is made from the first
//!   configuration that asks, and no test here configures text extraction;
//! - `connections::the_open_files_limit_is_raised_to_what_the_system_allows` raises the
//!   process's soft open-files limit, only ever upwards, and no other test reads it.
//!
//! A new test file is added as a `mod` line below; `test_binaries.rs` fails on a file in
//! `tests/` that is built by no binary.

mod support;

mod addresses;
mod admin_address;
mod answers;
mod ask;
mod auth;
mod browser;
mod buffer;
mod bwb;
mod cli;
mod cluster;
mod cluster_owner;
mod cluster_sigkill;
mod cluster_state;
mod complete_answers;
mod connections;
mod contract;
mod corpus;
mod cvdr;
mod dedup_semantic;
mod differential;
mod docs;
mod document_text;
mod driver;
mod eurlex;
mod hardening;
mod http_layer;
mod limits;
mod mcp;
mod ob;
mod offers;
mod opentk_ori;
mod page;
mod platforms;
mod plugin;
mod protocol;
mod real_files;
mod rechtspraak;
mod recording;
mod recording_order;
mod services;
mod shutdown;
mod sigkill;
mod sigkill_server;
mod surface;
mod tasks;
mod test_binaries;
mod text_corpus;
mod tk_debates;
mod tk_votes;
mod traces;
mod views;
