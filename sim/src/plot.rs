//! `--plot FILE.svg`: every session's waits over simulated time, one colour per session.
//!
//! The x axis is a call's submission instant, the y axis how long it waited; each
//! session is a line through its calls in submission order. Only the SVG backend is
//! used, so the simulator needs no font or image libraries.

use std::path::Path;

use plotters::prelude::*;

use crate::engine::{CallState, RunOutcome};

/// Sessions named in the legend; the rest are drawn but not labelled.
const LEGEND_SESSIONS_MAX: usize = 12;

/// Writes the wait plot of `run` to `path`.
pub fn write_wait_plot(run: &RunOutcome, path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let mut series: Vec<Vec<(f64, f64)>> = vec![Vec::new(); run.sessions.len()];
    for c in &run.calls {
        if let (Some(at), CallState::Done | CallState::Sent | CallState::Failed) = (c.admitted_at, c.state) {
            let x = c.submitted_at.as_millis() as f64 / 1000.0;
            let y = at.saturating_since(c.submitted_at).as_secs_f64();
            series[c.session as usize].push((x, y));
        }
    }
    for s in &mut series {
        s.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let x_max = series.iter().flatten().map(|p| p.0).fold(1.0, f64::max);
    let y_max = series.iter().flatten().map(|p| p.1).fold(1.0, f64::max) * 1.05;

    let root = SVGBackend::new(path, (1000, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("{} · policy {} · seed {}", run.name, run.policy.as_str(), run.seed),
            ("sans-serif", 20),
        )
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)?;
    chart
        .configure_mesh()
        .x_desc("submitted at (s)")
        .y_desc("wait (s)")
        .draw()?;
    for (i, points) in series.iter().enumerate() {
        if points.is_empty() {
            continue;
        }
        let colour = Palette99::pick(i).to_rgba();
        let drawn = chart.draw_series(LineSeries::new(points.iter().copied(), colour.stroke_width(1)))?;
        if i < LEGEND_SESSIONS_MAX {
            drawn
                .label(run.sessions[i].name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], colour));
        }
        chart.draw_series(PointSeries::of_element(
            points.iter().copied(),
            2,
            colour.filled(),
            &|c, s, st| Circle::new(c, s, st),
        ))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
