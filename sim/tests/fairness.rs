//! The fairness oracle, after the fair-queuing tests of Kubernetes' API priority and
//! fairness: from the offered demand compute each session's ideal share by max-min
//! (water-filling) and assert the measured share stays within a stated margin over a
//! long horizon.
//!
//! Why equal weights are the right oracle: R-L3's weight `1 / (1 + used / C)` falls as a
//! session uses more, so among continuously backlogged sessions the one that got more
//! is served less until cumulative usage evens out. Over a horizon much longer than W the
//! scheduler therefore converges to the max-min fair allocation of the platform's rate.

use besluitbron_core::Instant;
use besluitbron_sim::engine::CallState;
use besluitbron_sim::{PolicyKind, RunOptions, Scenario, run};

/// Weighted max-min fair shares of `capacity` for `demands` (same units), by water-filling:
/// sessions asking less than their weighted share get their demand, the rest split what is
/// left in proportion to their weights.
fn water_fill(capacity: f64, demands: &[f64], weights: &[f64]) -> Vec<f64> {
    let mut share = vec![0.0; demands.len()];
    let mut open: Vec<usize> = (0..demands.len()).collect();
    let mut left = capacity;
    while !open.is_empty() {
        let total_weight: f64 = open.iter().map(|&i| weights[i]).sum();
        let level = left / total_weight;
        let (satisfied, unsatisfied): (Vec<usize>, Vec<usize>) =
            open.iter().partition(|&&i| demands[i] <= level * weights[i]);
        if satisfied.is_empty() {
            for &i in &unsatisfied {
                share[i] = level * weights[i];
            }
            break;
        }
        for &i in &satisfied {
            share[i] = demands[i];
            left -= demands[i];
        }
        open = unsatisfied;
    }
    share
}

#[test]
fn water_fill_reference_model() {
    assert_eq!(water_fill(1.0, &[0.1, 0.5, 1.0, 2.0], &[1.0; 4]), [0.1, 0.3, 0.3, 0.3]);
    assert_eq!(water_fill(1.0, &[0.2, 0.2], &[1.0, 1.0]), [0.2, 0.2]);
    assert_eq!(water_fill(3.0, &[5.0, 5.0], &[2.0, 1.0]), [2.0, 1.0]);
}

const HORIZON_MS: u64 = 2 * 3600 * 1000;
const WARM_UP_MS: u64 = 600 * 1000;
/// Allowed distance between measured and ideal rate, in units per second (2 % of C/W;
/// measured at seed 1: within 0.001).
const MARGIN_UNITS_PER_S: f64 = 0.02;

#[test]
fn fair_policy_converges_to_max_min_shares_over_two_hours() {
    // OpenBesluitvorming: 1 unit/s. Demands 0.1, 0.5, 1 and 2 units/s.
    let periods_ms = [10_000u64, 2_000, 1_000, 500];
    let mut toml = String::from("description = \"fairness oracle\"\n[[platform]]\nid = \"obv\"\n");
    for (i, every) in periods_ms.iter().enumerate() {
        toml.push_str(&format!(
            "[[session]]\nname = \"s{i}\"\nsteady = [{{ every_ms = {every}, from_ms = 0, to_ms = {HORIZON_MS} }}]\n"
        ));
    }
    let scenario = Scenario::parse(&toml, "fairness").unwrap();
    let opts = RunOptions {
        policy: PolicyKind::Fair,
        seed: 1,
        keep_trace: false,
        progress: false,
    };
    let outcome = run("fairness", &scenario.workload(1), opts).unwrap_or_else(|f| panic!("{f}"));

    let demands: Vec<f64> = periods_ms.iter().map(|&p| 1000.0 / p as f64).collect();
    let ideal = water_fill(1.0, &demands, &[1.0; 4]);
    let (from, to) = (Instant::from_millis(WARM_UP_MS), Instant::from_millis(HORIZON_MS));
    let span_s = (HORIZON_MS - WARM_UP_MS) as f64 / 1000.0;
    let mut measured = vec![0.0; 4];
    for c in &outcome.calls {
        if let (Some(at), CallState::Done) = (c.admitted_at, c.state)
            && from <= at
            && at < to
        {
            measured[c.session as usize] += c.charged.as_milli() as f64 / 1000.0 / span_s;
        }
    }
    for i in 0..4 {
        assert!(
            (measured[i] - ideal[i]).abs() <= MARGIN_UNITS_PER_S,
            "session s{i}: measured {:.3} units/s, ideal {:.3} (all measured {measured:?})",
            measured[i],
            ideal[i]
        );
    }
}
