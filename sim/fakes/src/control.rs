//! The control route of the shared listener ([`serve_registry_on`](crate::serve_registry_on)),
//! so a process outside the fakes — the soak test, a developer with curl — can switch
//! faults while the fakes run and read their counters:
//!
//! - `GET /_control/state`: every fake's configuration and counters as one JSON object,
//!   keyed by platform id;
//! - `POST /_control/faults`: a body of fault settings `PLATFORM:NAME=VALUE` (the form
//!   `besluitbron-sim fakes --fault` takes: the common faults and each fake's own
//!   settings, such as `ori:retired=html`), separated by white space; answers the new
//!   state.
//!
//! Invariants:
//! - Only loopback peers are answered (403 otherwise), whatever address the fakes bind.
//! - A body is parsed whole before anything is applied: one bad setting (400, with the
//!   reason) changes nothing. The settings of one platform are applied under one lock,
//!   so a request sees all of them or none.
//! - The route is outside every fake's prefix: no fake counts, charges or faults it.
//!
//! What this module does not do: start or stop fakes, reset counters, or change a limit.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{Response, StatusCode};
use axum::middleware::{self, Next};
use axum::routing::{get, post};
use besluitbron_core::PlatformId;
use serde_json::{Map, Value, json};

use crate::config::PlatformFault;
use crate::hostile::HostileBody;
use crate::raw_response;
use crate::shared::FakeShared;

/// The prefix of the control route on the shared listener.
pub const CONTROL_PREFIX: &str = "/_control";

/// At most this many bytes of fault settings in one request.
const MAX_BODY_BYTES: usize = 4096;

type Fakes = Arc<Vec<(PlatformId, Arc<FakeShared>)>>;

/// The control routes over the fakes `fakes` (platform and shared state, registry order),
/// to be nested under [`CONTROL_PREFIX`].
pub(crate) fn router(fakes: Vec<(PlatformId, Arc<FakeShared>)>) -> Router {
    Router::new()
        .route("/state", get(state))
        .route("/faults", post(faults))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(middleware::from_fn(loopback_only))
        .with_state(Arc::new(fakes))
}

async fn loopback_only(request: Request, next: Next) -> Response<Body> {
    let loopback = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .is_some_and(|ConnectInfo(peer)| peer.ip().is_loopback());
    if loopback {
        next.run(request).await
    } else {
        raw_response(
            StatusCode::FORBIDDEN,
            "text/plain",
            "the control route answers loopback only\n",
        )
    }
}

async fn state(State(fakes): State<Fakes>) -> Response<Body> {
    json_ok(&snapshot(&fakes))
}

async fn faults(State(fakes): State<Fakes>, body: String) -> Response<Body> {
    let parsed: Result<Vec<PlatformFault>, _> = body.split_whitespace().map(str::parse::<PlatformFault>).collect();
    let settings = match parsed {
        Ok(settings) => settings,
        Err(e) => return raw_response(StatusCode::BAD_REQUEST, "text/plain", format!("{e}\n")),
    };
    for (platform, shared) in fakes.iter() {
        // Parsing checked each fake's own settings against that fake, so applying them
        // to the fake of their platform cannot meet another fake's type.
        shared.apply(settings.iter().filter(|s| s.platform == *platform).map(|s| &s.setting));
    }
    json_ok(&snapshot(&fakes))
}

fn json_ok(value: &Value) -> Response<Body> {
    raw_response(StatusCode::OK, "application/json", value.to_string())
}

/// Every fake's configuration and counters (see [`FakeHandle`](crate::FakeHandle) for what
/// each counter counts).
fn snapshot(fakes: &Fakes) -> Value {
    let mut out = Map::new();
    for (platform, shared) in fakes.iter() {
        let c = shared.config();
        let millis = |d: Option<std::time::Duration>| d.map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let load = |counter: &std::sync::atomic::AtomicU64| counter.load(Ordering::Relaxed);
        out.insert(
            platform.as_str().to_owned(),
            json!({
                "requests": load(&shared.requests),
                "rate_limited": load(&shared.rate_limited),
                "storm_rate_limited": load(&shared.storm_rate_limited),
                "failures_injected": load(&shared.failures_injected),
                "connections_reset": load(&shared.connections_reset),
                "stalled": load(&shared.stalled),
                "units_charged_milli": load(&shared.units_charged_milli),
                "garbage_answers": load(&shared.garbage_answers),
                "hostile_answers": load(&shared.hostile_answers),
                "config": {
                    "latency_ms": millis(Some(c.latency)),
                    "stall_ms": millis(c.stall),
                    "fail_every": c.fail_every.unwrap_or(0),
                    "reset_every": c.reset_every.unwrap_or(0),
                    "garbage": c.garbage,
                    "rate_limit_storm": c.rate_limit_storm,
                    "hostile": c.hostile.map(HostileBody::name),
                },
            }),
        );
    }
    Value::Object(out)
}
