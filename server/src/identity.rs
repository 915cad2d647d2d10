//! Who is asking: the key used for fairness at the platforms and for client limits.
//!
//! A request belongs to its MCP session when it carries the `Mcp-Session-Id` of a
//! session that exists at its route, in the session era (2025-06-18 / 2025-11-25);
//! otherwise (before `initialize`, a made-up or expired id, or a stateless 2026-07-28
//! request whatever its header says) to its client address. The request guard decides
//! this once (`crate::app`); nothing reads the header again later. An
//! IPv6 client is grouped per /64, the block one subscriber usually holds, so rotating
//! through its own addresses does not multiply its share. `X-Forwarded-For` is believed
//! only when the direct peer is a configured proxy, and then the rightmost address that
//! is not itself a trusted proxy is the client.
//!
//! With access tokens (`BesluitBron.Auth`, `crate::auth`), a request whose token is
//! valid belongs to its user, whatever its session or address: the core's rule
//! ([`besluitbron_core::identity::Who`]) makes the keys.
//!
//! What this module does not do: authenticate (`crate::auth` checks tokens; these keys
//! only separate clients for fairness and limits).

use std::net::{IpAddr, Ipv6Addr, SocketAddr};

use axum::http::{HeaderMap, HeaderName};
use besluitbron_core::SessionKey;
use besluitbron_core::identity::Who;

/// The MCP session header.
pub static SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");

/// The `Idempotency-Key` header. The names are made once: a lookup by text parses the
/// name again on every request.
static IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");

/// The `MCP-Protocol-Version` header.
static PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");

/// The client address a request is counted under, as text (`192.0.2.7`,
/// `2001:db8:1:2::/64`).
pub fn client_address(peer: SocketAddr, headers: &HeaderMap, trusted_proxies: &[IpAddr]) -> String {
    let mut ip = canonical(peer.ip());
    if trusted_proxies.contains(&ip) {
        let forwarded: Vec<IpAddr> = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .filter_map(|part| part.trim().parse::<IpAddr>().ok())
            .map(canonical)
            .collect();
        if let Some(client) = forwarded.iter().rev().find(|a| !trusted_proxies.contains(a)) {
            ip = *client;
        }
    }
    match ip {
        IpAddr::V4(v4) => dotted(v4),
        IpAddr::V6(v6) => {
            let s = v6.segments();
            let prefix = Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0);
            format!("{prefix}/64")
        }
    }
}

/// `v4` as `a.b.c.d`, as its `Display` writes it, without the formatting machinery
/// (this runs for every request).
fn dotted(v4: std::net::Ipv4Addr) -> String {
    let mut out = String::with_capacity(15);
    for (i, octet) in v4.octets().into_iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        if octet >= 100 {
            out.push(char::from(b'0' + octet / 100));
        }
        if octet >= 10 {
            out.push(char::from(b'0' + octet / 10 % 10));
        }
        out.push(char::from(b'0' + octet % 10));
    }
    out
}

fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

/// The MCP session id of a request, if it has a usable one.
pub fn session_id(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(&SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|s| !s.is_empty() && s.len() <= 256)
}

/// The `Idempotency-Key` header, if it has a usable one (1 to 256 bytes of text).
pub fn idempotency_key(headers: &HeaderMap) -> Option<String> {
    headers
        .get(&IDEMPOTENCY_KEY)
        .and_then(|v| v.to_str().ok())
        .filter(|k| !k.is_empty() && k.len() <= 256)
        .map(str::to_owned)
}

/// The `MCP-Protocol-Version` header, if any.
pub fn protocol_version(headers: &HeaderMap) -> Option<&str> {
    headers.get(&PROTOCOL_VERSION).and_then(|v| v.to_str().ok())
}

/// Whether requests of this protocol version are served statelessly (2026-07-28 on;
/// versions are dates, so they compare as text).
pub fn is_stateless_version(version: &str) -> bool {
    version.len() == 10 && version >= "2026-07-28"
}

/// The fairness key: the session when there is one, else the client address (the
/// core's rule for a request without a user).
pub fn fairness_key(session: Option<&str>, address: &str) -> SessionKey {
    Who {
        user: None,
        session,
        address,
    }
    .fairness_key()
}

/// Who made a request. Decided once, by the request guard, from what it can check: an
/// MCP session that exists at this address (session era), otherwise the client address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    /// The fairness key: the user, else the MCP session, else the client address.
    pub session: SessionKey,
    /// The user an access token vouched for (its opaque key), with `BesluitBron.Auth`.
    pub user: Option<String>,
    /// The MCP session id, when the request belongs to an existing session.
    pub session_id: Option<String>,
    /// The client address (IPv6 per /64).
    pub address: String,
    /// The `Idempotency-Key` header, if sent.
    pub idempotency_key: Option<String>,
}

/// The client address the system session's requests are counted under (R-D9).
const SYSTEM_ADDRESS: &str = "besluitbron";

impl Caller {
    /// The caller for a request of an existing `session_id` (or none) from `address`.
    pub fn new(session_id: Option<String>, address: String, idempotency_key: Option<String>) -> Caller {
        Caller::of_user(None, session_id, address, idempotency_key)
    }

    /// The caller for a request of `user` (a valid token's), of an existing `session_id`
    /// (or none), from `address`.
    pub fn of_user(
        user: Option<String>,
        session_id: Option<String>,
        address: String,
        idempotency_key: Option<String>,
    ) -> Caller {
        let session = Caller::who(user.as_deref(), session_id.as_deref(), &address).fairness_key();
        Caller::keyed(user, session_id, address, idempotency_key, session)
    }

    /// What the core's identity rule is told of a request.
    pub fn who<'a>(user: Option<&'a str>, session_id: Option<&'a str>, address: &'a str) -> Who<'a> {
        Who {
            user,
            session: session_id,
            address,
        }
    }

    /// As [`Caller::of_user`] with its fairness key already made (by the guard, which
    /// asked the client limits with it): `session` is the core's key of the three.
    pub fn keyed(
        user: Option<String>,
        session_id: Option<String>,
        address: String,
        idempotency_key: Option<String>,
        session: SessionKey,
    ) -> Caller {
        debug_assert_eq!(
            session,
            Caller::who(user.as_deref(), session_id.as_deref(), &address).fairness_key()
        );
        Caller {
            session,
            user,
            session_id,
            address,
            idempotency_key,
        }
    }

    /// BesluitBron's own system session: its maintenance and the search page (R-L7).
    pub fn system() -> Caller {
        Caller {
            session: SessionKey::System,
            user: None,
            session_id: None,
            address: SYSTEM_ADDRESS.to_owned(),
            idempotency_key: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(xff: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in xff {
            h.append("x-forwarded-for", v.parse().unwrap());
        }
        h
    }

    #[test]
    fn an_ipv4_address_is_written_as_its_display_writes_it() {
        for octets in [
            [0, 0, 0, 0],
            [127, 0, 0, 1],
            [10, 9, 99, 100],
            [255, 254, 200, 1],
            [1, 20, 109, 250],
        ] {
            let v4 = std::net::Ipv4Addr::from(octets);
            assert_eq!(dotted(v4), v4.to_string());
        }
        for n in (0..=u32::MAX).step_by(65_521) {
            let v4 = std::net::Ipv4Addr::from(n);
            assert_eq!(dotted(v4), v4.to_string());
        }
    }

    #[test]
    fn ipv6_clients_are_grouped_per_64() {
        let a: SocketAddr = "[2001:db8:1:2:aaaa::1]:5000".parse().unwrap();
        let b: SocketAddr = "[2001:db8:1:2:bbbb::9]:6000".parse().unwrap();
        assert_eq!(client_address(a, &HeaderMap::new(), &[]), "2001:db8:1:2::/64");
        assert_eq!(
            client_address(a, &HeaderMap::new(), &[]),
            client_address(b, &HeaderMap::new(), &[])
        );
        let mapped: SocketAddr = "[::ffff:192.0.2.7]:1".parse().unwrap();
        assert_eq!(client_address(mapped, &HeaderMap::new(), &[]), "192.0.2.7");
    }

    #[test]
    fn forwarded_for_is_believed_only_from_trusted_proxies() {
        let proxy: IpAddr = "10.0.0.5".parse().unwrap();
        let via_proxy = SocketAddr::new(proxy, 443);
        let direct: SocketAddr = "198.51.100.3:443".parse().unwrap();
        let h = headers(&["203.0.113.9, 10.0.0.5"]);
        assert_eq!(client_address(via_proxy, &h, &[proxy]), "203.0.113.9");
        assert_eq!(
            client_address(direct, &h, &[proxy]),
            "198.51.100.3",
            "an untrusted peer cannot claim another address"
        );
        // A spoofed leftmost entry does not help: the rightmost untrusted one counts.
        let spoofed = headers(&["1.2.3.4", "203.0.113.9"]);
        assert_eq!(client_address(via_proxy, &spoofed, &[proxy]), "203.0.113.9");
    }

    #[test]
    fn only_the_stateless_era_ignores_a_session() {
        assert!(is_stateless_version("2026-07-28"));
        assert!(!is_stateless_version("2025-11-25"));
        assert!(!is_stateless_version("2025-06-18"));
        assert!(!is_stateless_version("latest"));
    }

    #[test]
    fn the_session_wins_over_the_address() {
        let mut h = HeaderMap::new();
        assert_eq!(session_id(&h), None);
        h.insert(SESSION_HEADER.clone(), "abc".parse().unwrap());
        assert_eq!(session_id(&h), Some("abc"));
        assert_eq!(
            fairness_key(session_id(&h), "192.0.2.1"),
            SessionKey::client("session:abc")
        );
        assert_eq!(fairness_key(None, "192.0.2.1"), SessionKey::client("addr:192.0.2.1"));
    }
}
