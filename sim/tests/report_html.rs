//! The HTML report (`--report FILE.html`): its SVG's structure, not its pixels, is
//! snapshotted (`snapshots/sim/report_html.*.snap`); the page is self-contained.

use besluitbron_sim::html::{render_report, svg_structure};
use besluitbron_sim::{PolicyKind, run_canonical};

#[test]
fn the_106_second_case_report_shows_legacy_and_fair_side_by_side() {
    let legacy = run_canonical("obv-starvation", PolicyKind::Legacy, None).expect("legacy run");
    let fair = run_canonical("obv-starvation", PolicyKind::Fair, None).expect("fair run");
    let page = render_report("obv-starvation", &[&legacy, &fair]);
    // Self-contained: nothing is loaded from elsewhere, nothing runs.
    assert!(!page.contains("<script"), "no script");
    assert!(
        !page.contains("src=") && !page.contains("href="),
        "no outside resources"
    );
    // Side by side, legacy first; the second session's wait is past the bound under
    // legacy only.
    let legacy_lanes = page.find("class=\"lanes legacy\"").expect("legacy lanes");
    let fair_lanes = page.find("class=\"lanes fair\"").expect("fair lanes");
    assert!(legacy_lanes < fair_lanes);
    let legacy_svg = &page[legacy_lanes..fair_lanes];
    let fair_svg = &page[fair_lanes..];
    let fair_svg = &fair_svg[..fair_svg.find("</svg>").unwrap()];
    assert_eq!(
        legacy_svg.matches("class=\"wait over\"").count(),
        1,
        "legacy: one turn past the bound"
    );
    assert_eq!(fair_svg.matches("class=\"wait over\"").count(), 0, "fair: none");
    assert!(page.contains("starvation bound 61.0 s"));
    insta::with_settings!({snapshot_path => "../../snapshots/sim", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("report_html.obv-starvation", svg_structure(&page));
    });
}
