//! The Host and Origin checks: which Host headers the routes that are not MCP's accept
//! ([`host_allowed`], [`host_check`]), and whether an Origin is a page of this server's own
//! loopback address ([`own_loopback_origin`]).
//!
//! Invariants: a DNS-rebound name, another port, `https`, or a server listening on a
//! public address is never its own loopback origin. What it does not do: check the MCP
//! routes' Host and Origin (rmcp does, with the configured lists).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::state::GuardState;

/// The Host check of the MCP routes, for every other route (`/healthz`, `/readyz`,
/// `/metrics`): a page on another site that rebinds its name to this address must not
/// read them. Same rule as rmcp's: the Host's name (any case, IPv6 without brackets) is
/// one of `allowed`, and its port too when that entry names one.
pub fn host_allowed(headers: &axum::http::HeaderMap, allowed: &[String]) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let Some((name, port)) = authority(host) else {
        return false;
    };
    allowed
        .iter()
        .filter_map(|a| authority(a))
        .any(|(allowed_name, allowed_port)| allowed_name == name && allowed_port.is_none_or(|p| port == Some(p)))
}

/// True when `headers` carry the Origin of a page served by this very server on loopback:
/// the server listens on a loopback address (`listening`), and the Origin is
/// `http://NAME:PORT` with a loopback NAME (`localhost`, `127.0.0.1`, `[::1]`) and the
/// listening PORT, the same origin the Host header names. A page of another site (DNS
/// rebinding), of another port on this machine, over `https`, or reaching a server that
/// listens on a public address is not.
pub fn own_loopback_origin(headers: &axum::http::HeaderMap, listening: SocketAddr) -> bool {
    if !listening.ip().is_loopback() {
        return false;
    }
    let (Some(origin), Some(host)) = (
        headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()),
        headers.get(header::HOST).and_then(|v| v.to_str().ok()),
    ) else {
        return false;
    };
    let origin = origin.trim();
    let Some(rest) = origin
        .get(..7)
        .filter(|scheme| scheme.eq_ignore_ascii_case("http://"))
        .and_then(|_| origin.get(7..))
    else {
        return false;
    };
    // An origin is a scheme, a host and a port: nothing else may follow or precede them.
    if rest.contains(['/', '@', '?', '#']) {
        return false;
    }
    let (Some((name, port)), Some((host_name, host_port))) = (strict_authority(rest), strict_authority(host)) else {
        return false;
    };
    let (port, host_port) = (port.unwrap_or(80), host_port.unwrap_or(80));
    let loopback = name == "localhost" || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    loopback && name == host_name && port == host_port && port == listening.port()
}

/// A `host[:port]` that parses as an authority without user information, as its lower-case
/// name without brackets and its port.
fn strict_authority(text: &str) -> Option<(String, Option<u16>)> {
    let a = axum::http::uri::Authority::try_from(text.trim()).ok()?;
    if a.as_str().contains('@') || a.host().is_empty() {
        return None;
    }
    Some((a.host().trim_matches(['[', ']']).to_ascii_lowercase(), a.port_u16()))
}

/// A `host[:port]` as its lower-case name without brackets and its port.
fn authority(text: &str) -> Option<(String, Option<u16>)> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let (name, port) = match axum::http::uri::Authority::try_from(text) {
        Ok(a) => (a.host().to_owned(), a.port_u16()),
        Err(_) => (text.to_owned(), None),
    };
    Some((name.trim_matches(['[', ']']).to_ascii_lowercase(), port))
}

/// The layer of [`host_allowed`] around the routes that are not MCP's.
pub async fn host_check(
    axum::extract::State(state): axum::extract::State<Arc<GuardState>>,
    request: Request,
    next: axum::middleware::Next,
) -> Response {
    if host_allowed(request.headers(), &state.config.hosts()) {
        next.run(request).await
    } else {
        (StatusCode::FORBIDDEN, "Forbidden: Host header is not allowed").into_response()
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn host_and_origin(host: &str, origin: &str) -> axum::http::HeaderMap {
        let mut h = axum::http::HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_str(host).expect("host"));
        h.insert(header::ORIGIN, HeaderValue::from_str(origin).expect("origin"));
        h
    }

    #[test]
    fn the_own_origin_is_the_listening_loopback_address_as_the_host_names_it() {
        let v4: SocketAddr = "127.0.0.1:8080".parse().expect("addr");
        let v6: SocketAddr = "[::1]:8080".parse().expect("addr");
        for listening in [v4, v6] {
            for (host, origin) in [
                ("127.0.0.1:8080", "http://127.0.0.1:8080"),
                ("localhost:8080", "http://localhost:8080"),
                ("[::1]:8080", "http://[::1]:8080"),
                ("LocalHost:8080", "HTTP://localhost:8080"),
            ] {
                assert!(
                    own_loopback_origin(&host_and_origin(host, origin), listening),
                    "{host} {origin}"
                );
            }
        }
        // Port 80 may be left out on both sides.
        let eighty: SocketAddr = "127.0.0.1:80".parse().expect("addr");
        assert!(own_loopback_origin(
            &host_and_origin("localhost", "http://localhost:80"),
            eighty
        ));
        for (host, origin) in [
            ("127.0.0.1:8080", "http://127.0.0.1:8081"),
            ("127.0.0.1:8081", "http://127.0.0.1:8081"),
            ("127.0.0.1:8080", "http://localhost:8080"),
            ("127.0.0.1:8080", "https://127.0.0.1:8080"),
            ("evil.example:8080", "http://evil.example:8080"),
            ("127.0.0.1:8080", "http://127.0.0.1:8080/"),
            ("127.0.0.1:8080", "http://a@127.0.0.1:8080"),
            ("127.0.0.1:8080", "null"),
            ("127.0.0.1:8080", "http://"),
        ] {
            assert!(
                !own_loopback_origin(&host_and_origin(host, origin), v4),
                "{host} {origin}"
            );
        }
        // A server listening on every address, or on a public one, keeps to the
        // configured origins only.
        for listening in ["0.0.0.0:8080", "[::]:8080", "192.0.2.7:8080"] {
            let listening: SocketAddr = listening.parse().expect("addr");
            let own = host_and_origin("127.0.0.1:8080", "http://127.0.0.1:8080");
            assert!(!own_loopback_origin(&own, listening), "{listening}");
        }
        assert!(!own_loopback_origin(&axum::http::HeaderMap::new(), v4));
    }
}
