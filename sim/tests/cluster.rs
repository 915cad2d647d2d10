//! Several replicas, one owner: the canonical cluster scenario against its
//! snapshot, and what its checker proved asserted directly.

use besluitbron_sim::cluster::{Balancer, CallEnd, ClusterScenario, run_cluster};

fn canonical() -> ClusterScenario {
    ClusterScenario::canonical("three-replicas-obv").unwrap()
}

#[test]
fn three_replicas_on_obv_match_their_snapshot() {
    let outcome = run_cluster("three-replicas-obv", &canonical()).unwrap_or_else(|e| panic!("{e}"));
    insta::with_settings!({snapshot_path => "../../snapshots/sim", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("cluster.three-replicas-obv", outcome.render());
    });
    assert_eq!(outcome.over_limit, 0);
    assert!(outcome.max_admitting <= 1);
    // Every fault handed the lease over, and a new owner took it each time.
    assert!(outcome.owners.len() >= 5, "{:#?}", outcome.owners);
    assert!(outcome.forwarded > 0 && outcome.rerouted > 0);
    // The soft-state case happened: a replica was granted the lease while the previous
    // owner (paused) still believed it held it, and the rules kept them apart.
    assert!(
        outcome
            .owners
            .windows(2)
            .any(|w| w[0].ended.is_some_and(|(end, _)| w[1].acquired_ms < end)),
        "{:#?}",
        outcome.owners
    );
    // An engine pause shorter than TTL − m − TTL/3 (2.33 s; the scenario's is 2 s) never
    // costs the lease: the renewals held by the pause are answered in time.
    assert!(
        !outcome
            .owners
            .iter()
            .any(|o| o.ended.is_some_and(|(at, _)| (150_000..156_000).contains(&at))),
        "{:#?}",
        outcome.owners
    );
    // After the kill -9 at 30 s the next owner admits within 2·TTL + m (11 s).
    let next = outcome.owners.iter().find(|o| o.acquired_ms > 30_000).unwrap();
    assert!(next.admitting_ms.unwrap() <= 30_000 + 11_000, "{next:?}");
    // The flood was answered (a client gives up only when no owner could be found for
    // longer than its patience, which these faults never cause).
    assert_eq!(outcome.ends.get(&CallEnd::GaveUp), None);
    assert_eq!(outcome.ends.get(&CallEnd::Failed), None);
    // Never more than the platform's bucket in any window.
    assert!(outcome.max_units_in_window.as_milli() <= 60_000);
}

#[test]
fn every_balancer_keeps_the_invariants() {
    for balancer in [Balancer::Hash, Balancer::RoundRobin, Balancer::Random] {
        for seed in [1, 2, 3] {
            let mut s = canonical();
            s.balancer = balancer;
            s.seed = seed;
            let outcome = run_cluster("three-replicas-obv", &s).unwrap_or_else(|e| panic!("{balancer:?} {seed}: {e}"));
            assert_eq!(outcome.over_limit, 0);
        }
    }
}

#[test]
fn identical_questions_on_different_replicas_reach_the_platform_once_at_a_time() {
    // Few questions, many sessions spread round robin: most calls coalesce at the owner
    // or are answered from its buffer.
    let mut s = canonical();
    s.key_pool = 5;
    s.faults.clear();
    let outcome = run_cluster("few-questions", &s).unwrap_or_else(|e| panic!("{e}"));
    assert!(outcome.upstream <= 5 + 2, "{}", outcome.render());
    assert!(outcome.forwarded > outcome.calls / 2);
}
