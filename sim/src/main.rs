//! `besluitbron-sim`: BesluitBron's discrete-event simulator (being built; see sim/README.md).

fn main() {
    eprintln!("besluitbron-sim: the simulator arrives with its own issue; nothing to run yet");
    std::process::exit(2);
}
