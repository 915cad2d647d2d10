//! W3C trace context in and out: the trace a request belongs to, as its client said it
//! (`traceparent` and `tracestate` in `params._meta`, as the MCP semantic conventions put
//! them, or in the HTTP headers), and the `traceparent` a forward to another replica
//! carries.
//!
//! Rules: the `_meta` pair wins over the headers when it is valid; a malformed
//! `traceparent` (wrong length, version `ff`, all-zero ids, not hex) is ignored, never an
//! error: the request starts a trace of its own. Parsing is OpenTelemetry's
//! [`TraceContextPropagator`], which follows the W3C recommendation.

use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::{TraceContextExt, TraceId};
use opentelemetry_sdk::propagation::TraceContextPropagator;

/// The W3C header (and `_meta` key) naming the parent span.
pub const TRACEPARENT: &str = "traceparent";

/// The W3C header (and `_meta` key) carrying vendors' trace state.
pub const TRACESTATE: &str = "tracestate";

/// Where a request's trace context came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// `params._meta` of the JSON-RPC request.
    Meta,
    /// The HTTP request's headers.
    Header,
}

/// The trace a request joins: its client's span as a remote parent, or none.
#[derive(Clone, Debug)]
pub struct Incoming {
    /// The remote parent (an empty context: a new root).
    pub context: opentelemetry::Context,
    /// Where it was read; `None`: no valid trace context came with the request.
    pub source: Option<Source>,
}

impl Incoming {
    /// No trace context: the request starts its own trace.
    pub fn root() -> Incoming {
        Incoming {
            context: opentelemetry::Context::new(),
            source: None,
        }
    }

    /// The client's trace id, when it sent a valid one.
    pub fn trace_id(&self) -> Option<TraceId> {
        self.source.map(|_| self.context.span().span_context().trace_id())
    }
}

/// One `traceparent` with its `tracestate`, as a carrier the propagator reads.
struct Pair<'a> {
    traceparent: Option<&'a str>,
    tracestate: Option<&'a str>,
}

impl Extractor for Pair<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            TRACEPARENT => self.traceparent,
            TRACESTATE => self.tracestate,
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        vec![TRACEPARENT, TRACESTATE]
    }
}

/// The context `traceparent` (with `tracestate`) names, if it is valid.
fn parse(traceparent: Option<&str>, tracestate: Option<&str>) -> Option<opentelemetry::Context> {
    traceparent?;
    let context = TraceContextPropagator::new().extract(&Pair {
        traceparent,
        tracestate,
    });
    context.span().span_context().is_valid().then_some(context)
}

/// The trace a request joins: the `_meta` pair (`meta`: its `traceparent` and
/// `tracestate`) when valid, else the headers' pair, else a new root.
pub fn incoming(meta: (Option<&str>, Option<&str>), headers: Option<&axum::http::HeaderMap>) -> Incoming {
    if let Some(context) = parse(meta.0, meta.1) {
        return Incoming {
            context,
            source: Some(Source::Meta),
        };
    }
    let header = |name: &str| headers.and_then(|h| h.get(name)).and_then(|v| v.to_str().ok());
    match parse(header(TRACEPARENT), header(TRACESTATE)) {
        Some(context) => Incoming {
            context,
            source: Some(Source::Header),
        },
        None => Incoming::root(),
    }
}

/// The `traceparent` naming `span` (exporting on), for a request that continues its
/// trace elsewhere; `None` when the span is not traced.
pub fn traceparent(span: &tracing::Span) -> Option<String> {
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;
    struct One(Option<String>);
    impl Injector for One {
        fn set(&mut self, key: &str, value: String) {
            if key == TRACEPARENT {
                self.0 = Some(value);
            }
        }
    }
    let context = span.context();
    if !context.span().span_context().is_valid() {
        return None;
    }
    let mut out = One(None);
    TraceContextPropagator::new().inject_context(&context, &mut out);
    out.0
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLIENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    fn headers(traceparent: &str) -> axum::http::HeaderMap {
        let mut h = axum::http::HeaderMap::new();
        h.insert(TRACEPARENT, traceparent.parse().expect("header value"));
        h
    }

    #[test]
    fn the_meta_pair_wins_over_the_header() {
        let other = "00-11111111111111111111111111111111-2222222222222222-01";
        let got = incoming((Some(CLIENT), Some("vendor=x")), Some(&headers(other)));
        assert_eq!(got.source, Some(Source::Meta));
        assert_eq!(
            got.trace_id().map(|t| t.to_string()).as_deref(),
            Some("0af7651916cd43dd8448eb211c80319c")
        );
        let from_header = incoming((None, None), Some(&headers(other)));
        assert_eq!(from_header.source, Some(Source::Header));
        assert_eq!(
            from_header.trace_id().map(|t| t.to_string()).as_deref(),
            Some("11111111111111111111111111111111")
        );
    }

    #[test]
    fn a_malformed_traceparent_is_ignored_never_an_error() {
        for bad in [
            "",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
            "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "00-0AF7651916CD43DD8448EB211C80319Z-b7ad6b7169203331-01",
            "not a trace at all",
        ] {
            let got = incoming((Some(bad), None), None);
            assert_eq!(got.source, None, "{bad:?}");
            assert_eq!(got.trace_id(), None, "{bad:?}");
        }
        // A malformed `_meta` pair leaves the header's standing.
        let got = incoming((Some("garbage"), None), Some(&headers(CLIENT)));
        assert_eq!(got.source, Some(Source::Header));
    }

    #[test]
    fn an_untraced_span_has_no_traceparent() {
        assert_eq!(traceparent(&tracing::Span::none()), None);
    }

    #[test]
    fn a_forward_carries_the_trace_and_the_owner_continues_it() {
        use opentelemetry::trace::TracerProvider as _;
        use tracing_opentelemetry::OpenTelemetrySpanExt as _;
        use tracing_subscriber::layer::SubscriberExt as _;
        let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
        let traced =
            tracing_subscriber::registry().with(tracing_opentelemetry::layer().with_tracer(provider.tracer("t")));
        tracing::subscriber::with_default(traced, || {
            let client = incoming((Some(CLIENT), None), None);
            let request = super::super::spans::mcp_request(&super::super::spans::McpRequest::default(), &client);
            let _in_request = request.enter();
            // The forwarding replica: its forward span's traceparent, sent as a header.
            let forward = super::super::spans::forward_client("obv", "http://owner");
            let sent = traceparent(&forward).expect("a traced span has a traceparent");
            assert!(sent.starts_with("00-0af7651916cd43dd8448eb211c80319c-"), "{sent}");
            // The owner: the header read back, its span a child of the forward's.
            let mut header = axum::http::HeaderMap::new();
            header.insert(TRACEPARENT, sent.parse().expect("header value"));
            let owner = super::super::spans::forwarded("obv_search", &incoming((None, None), Some(&header)));
            let owner = owner.context();
            let owner = owner.span().span_context().clone();
            assert_eq!(owner.trace_id().to_string(), "0af7651916cd43dd8448eb211c80319c");
            let parent = incoming((None, None), Some(&header));
            let parent = parent.context.span().span_context().span_id();
            assert_eq!(parent, forward.context().span().span_context().span_id());
        });
    }
}
