//! `plan`: a traffic model answered from a run's aggregates — per service (each limit
//! kept, shared by the platforms that call it) and per platform the waits and the share of
//! time at the limit, as a table, JSON and a page; bad models refused by name.

use besluitbron_sim::plan::{PlanAnswer, TrafficModel, answer, html};

/// Two days of a small server; `obv_capacity` lowers OpenBesluitvorming's limit (a what-if).
fn model(obv_capacity: Option<u32>, replicas: u32) -> TrafficModel {
    let mut text = format!(
        "description = \"two days\"\nseed = 5\nreplicas = {replicas}\n\n[traffic]\ndays = 2\n\
         sessions_per_day = 200\nrounds = [3, 20]\nfan_out = [1, 3]\nthink_ms = [500, 8000]\n\
         cancel_after_ms = 120000\nmix = {{ obv = 3, bwb = 1, cvdr = 1 }}\n\
         rhythm = {{ daily = [0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 3, 3, 2, 2, 3, 3, 2, 1, 0, 0, 0, 0, 0, 0] }}\n"
    );
    if let Some(c) = obv_capacity {
        text += &format!("\n[[platform]]\nid = \"obv\"\ncapacity = {c}\nwindow_s = 60\n");
    }
    TrafficModel::parse(&text, "model").unwrap_or_else(|e| panic!("{e}"))
}

fn answered(m: &TrafficModel) -> PlanAnswer {
    answer("model", m, false).unwrap_or_else(|f| panic!("{f}"))
}

#[test]
fn a_plan_answers_per_service_and_per_platform_from_the_aggregates() {
    let a = answered(&model(None, 3));
    let services: Vec<&str> = a.services.iter().map(|s| s.scope.as_str()).collect();
    assert_eq!(
        services,
        ["obv", "koop-zoekservice"],
        "the services that got calls, in order: bwb and cvdr share KOOP's zoekservice"
    );
    assert_eq!(a.services[1].name, "koop-zoekservice (bwb, cvdr)");
    assert_eq!(a.services[1].limit, Some((30.0, 30.0)), "one budget for both");
    let platforms: Vec<&str> = a.platforms.iter().map(|s| s.scope.as_str()).collect();
    assert_eq!(platforms, ["obv", "bwb", "cvdr"], "the mix's platforms, in order");
    assert!(a.platforms.iter().all(|p| p.limit.is_none() && p.kind == "platform"));
    assert_eq!(a.sessions, 400);
    assert_eq!(a.calls, a.services.iter().map(|s| s.calls).sum::<u64>() + a.gave_up);
    // Every admitted call counts at its service and at its platform, once each.
    assert_eq!(
        a.services.iter().map(|s| s.calls).sum::<u64>(),
        a.platforms.iter().map(|s| s.calls).sum::<u64>()
    );
    assert_eq!(a.services[1].calls, a.platforms[1].calls + a.platforms[2].calls);
    // A platform waits while its service does (they are its only service here).
    assert!((a.platforms[0].at_limit - a.services[0].at_limit).abs() < 1e-9);
    assert!((a.forwarded - 2.0 / 3.0).abs() < 1e-9, "{}", a.forwarded);
    for s in a.services.iter().chain(&a.platforms) {
        assert!(s.wait_p50_s <= s.wait_p99_s && s.wait_p99_s <= s.wait_max_s, "{s:?}");
        assert!((0.0..=1.0).contains(&s.at_limit), "{s:?}");
        assert_eq!(s.series.iter().map(|b| b.calls).sum::<u64>(), s.calls, "{s:?}");
    }
    // A quarter of OpenBesluitvorming's limit: the same traffic waits, and the time at the
    // limit shows where.
    let tight = answered(&model(Some(15), 3));
    let (wide, narrow) = (&a.services[0], &tight.services[0]);
    assert!(
        narrow.at_limit > wide.at_limit,
        "{} vs {}",
        narrow.at_limit,
        wide.at_limit
    );
    assert!(
        narrow.wait_p99_s > wide.wait_p99_s,
        "{} vs {}",
        narrow.wait_p99_s,
        wide.wait_p99_s
    );
    assert!(
        narrow.series.iter().any(|b| b.at_limit > 0.5),
        "busy hours at the limit"
    );
    // The same model, the same answer.
    let again = answered(&model(Some(15), 3));
    assert_eq!(
        serde_json::to_string(&tight).unwrap(),
        serde_json::to_string(&again).unwrap()
    );
    let table = tight.render();
    assert!(
        table.contains("obv") && table.contains("at limit") && table.contains("koop-zoekservice"),
        "{table}"
    );
    let page = html::render(&tight);
    assert_eq!(
        page.matches("<section class=\"scope\"").count(),
        5,
        "a section per service and per platform"
    );
    assert!(page.contains("class=\"stretch\"") && page.contains("class=\"mean-wait\""));
    assert!(page.contains("Not modelled"), "the page says what it leaves out");
}

#[test]
fn a_bad_model_is_refused_by_name() {
    let base = "description = \"x\"\n[traffic]\ndays = 1\nsessions_per_day = 1\nrounds = [1, 1]\n\
                think_ms = [0, 0]\nmix = { obv = 1 }\n";
    for (text, says) in [
        (format!("replicas = 0\n{base}"), "replicas"),
        (base.replace("days = 1", "days = 0"), "traffic.days"),
        (
            format!("{base}[[platform]]\nid = \"ob\"\n"),
            "`ob` is listed but not in traffic.mix",
        ),
        (base.replace("mix = { obv = 1 }", "mix = { Obv = 1 }"), "no platform id"),
        (base.replace("rounds = [1, 1]", "rounds = [2, 1]"), "swapped"),
        (format!("{base}colour = 1\n"), "unknown field"),
    ] {
        let err = TrafficModel::parse(&text, "bad.toml").expect_err(says).to_string();
        assert!(err.contains(says), "{says}: {err}");
    }
}
