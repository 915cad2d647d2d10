//! Access tokens (`BesluitBron.Auth`) through the real server, against a loopback
//! issuer that serves OpenID discovery and a JWKS the test can rotate, with keys made in
//! the test: the 401 and its metadata link, the metadata, tokens that pass and tokens
//! that do not, a key rotation, two users behind one address limited apart, a session
//! bound to its user, and no token ever reaching a platform.

use crate::support;

use std::sync::{Arc, Mutex};

use base64::Engine as _;
use besluitbron_core::limits::RateLimit;
use besluitbron_server::config::AuthMode;
use ed25519_dalek::{Signer, SigningKey};
use serde_json::{Value, json};
use support::{Fakes, Mcp, Server, config, fakes, temp_dir};

/// The resource the server is configured as (tokens' audience).
const RESOURCE: &str = "https://besluitbron.test/mcp";

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// An ed25519 signing key of the test.
struct Key {
    kid: String,
    signing: SigningKey,
}

impl Key {
    fn new(kid: &str, seed: u8) -> Key {
        Key {
            kid: kid.to_owned(),
            signing: SigningKey::from_bytes(&[seed; 32]),
        }
    }

    fn jwk(&self) -> Value {
        json!({"kty": "OKP", "crv": "Ed25519", "use": "sig", "alg": "EdDSA", "kid": self.kid,
               "x": b64(&self.signing.verifying_key().to_bytes())})
    }

    fn sign(&self, claims: &Value) -> String {
        let header = json!({"alg": "EdDSA", "typ": "JWT", "kid": self.kid});
        let input = format!(
            "{}.{}",
            b64(header.to_string().as_bytes()),
            b64(claims.to_string().as_bytes())
        );
        format!("{input}.{}", b64(&self.signing.sign(input.as_bytes()).to_bytes()))
    }
}

/// A loopback issuer: discovery and a JWKS the test may replace.
struct Issuer {
    url: String,
    jwks: Arc<Mutex<Value>>,
}

impl Issuer {
    async fn start(keys: &[&Key]) -> Issuer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let jwks = Arc::new(Mutex::new(
            json!({"keys": keys.iter().map(|k| k.jwk()).collect::<Vec<_>>()}),
        ));
        let discovery = json!({"issuer": url, "jwks_uri": format!("{url}/jwks"),
            "authorization_endpoint": format!("{url}/auth"), "token_endpoint": format!("{url}/token")});
        let served = Arc::clone(&jwks);
        let app = axum::Router::new()
            .route(
                "/.well-known/openid-configuration",
                axum::routing::get(move || async move { axum::Json(discovery) }),
            )
            .route(
                "/jwks",
                axum::routing::get(move || async move { axum::Json(served.lock().expect("jwks").clone()) }),
            );
        tokio::spawn(async move { axum::serve(listener, app).await });
        Issuer { url, jwks }
    }

    fn publish(&self, keys: &[&Key]) {
        *self.jwks.lock().expect("jwks") = json!({"keys": keys.iter().map(|k| k.jwk()).collect::<Vec<_>>()});
    }

    /// Claims of a valid token for `sub`.
    fn claims(&self, sub: &str) -> Value {
        let now = besluitbron_server::clock::wall_now().0 / 1000;
        json!({"iss": self.url, "sub": sub, "aud": RESOURCE, "exp": now + 600, "iat": now})
    }
}

/// A stateless client sending `token` (if any) as its bearer token.
fn client(server: &Server, path: &str, token: Option<&str>) -> Mcp {
    let mut c = Mcp::modern(server.url(path));
    if let Some(t) = token {
        c.extra_headers
            .push(("authorization".to_owned(), format!("Bearer {t}")));
    }
    c
}

async fn list(c: &Mcp) -> support::Reply {
    c.post(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).await
}

fn challenge(r: &support::Reply) -> String {
    r.headers
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

fn auth_config(f: &support::Fakes, issuer: &Issuer, mode: AuthMode, name: &str) -> besluitbron_server::config::Config {
    let mut cfg = config(f, &temp_dir(name));
    cfg.auth.mode = mode;
    cfg.auth.issuer = issuer.url.clone();
    cfg.auth.resource = RESOURCE.to_owned();
    cfg
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn required_mode_serves_valid_tokens_only_and_no_token_reaches_a_platform() {
    let f = fakes().await;
    let k1 = Key::new("k1", 1);
    let k2 = Key::new("k2", 2);
    let issuer = Issuer::start(&[&k1]).await;
    let server = Server::start(auth_config(&f, &issuer, AuthMode::Required, "auth-required")).await;

    without_a_token_the_metadata_is_named(&server, &issuer).await;

    // A valid token: served, through to a platform.
    let alice = k1.sign(&issuer.claims("alice"));
    let c = client(&server, "/mcp/obv", Some(&alice));
    let r = list(&c).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let r = c
        .call_with_id(2, "obv_search", json!({"query": "begroting", "limit": 2}))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(
        r.message.as_ref().is_some_and(|m| m.get("result").is_some()),
        "{}",
        r.text
    );
    assert!(f.obv.requests() > 0, "the call reached the platform");

    invalid_tokens_are_refused(&server, &issuer, &k1).await;

    // The issuer rotates in a new key: a token signed with it works at once.
    issuer.publish(&[&k1, &k2]);
    let r = list(&client(&server, "/mcp", Some(&k2.sign(&issuer.claims("alice"))))).await;
    assert_eq!(r.status, 200, "rotated key: {}", r.text);
    // A key the issuer does not publish.
    let unknown = Key::new("k3", 3).sign(&issuer.claims("alice"));
    let r = list(&client(&server, "/mcp", Some(&unknown))).await;
    assert_eq!(r.status, 401, "unknown key: {}", r.text);

    no_token_was_passed_on(&f, &server, &alice).await;
    server.stop().await;
}

/// No token: 401 with the metadata link, at every MCP address.
async fn without_a_token_the_metadata_is_named(server: &Server, issuer: &Issuer) {
    for path in ["/mcp", "/mcp/obv"] {
        let r = list(&client(server, path, None)).await;
        assert_eq!(r.status, 401, "{path}: {}", r.text);
        assert_eq!(
            challenge(&r),
            format!("Bearer resource_metadata=\"https://besluitbron.test/.well-known/oauth-protected-resource{path}\"")
        );
    }
    // The metadata names the resource and the issuer, at both forms of its address.
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let text = reqwest::get(server.url(path))
            .await
            .expect("metadata")
            .text()
            .await
            .expect("a body");
        let doc: Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(doc["resource"], RESOURCE, "{path}");
        assert_eq!(doc["authorization_servers"], json!([issuer.url]), "{path}");
    }
    // The search page keeps its own guard.
    let page = reqwest::get(server.url("/")).await.expect("page");
    assert_eq!(page.status(), 200);
}

/// Tokens that do not pass: 401 invalid_token.
async fn invalid_tokens_are_refused(server: &Server, issuer: &Issuer, k1: &Key) {
    let mut wrong_audience = issuer.claims("alice");
    wrong_audience["aud"] = json!("https://elsewhere.test/mcp");
    let mut expired = issuer.claims("alice");
    expired["exp"] = json!(besluitbron_server::clock::wall_now().0 / 1000 - 300);
    let mut other_issuer = issuer.claims("alice");
    other_issuer["iss"] = json!("https://other-issuer.test");
    let none = format!(
        "{}.{}.",
        b64(br#"{"alg":"none","typ":"JWT"}"#),
        b64(issuer.claims("alice").to_string().as_bytes())
    );
    for (what, token) in [
        ("wrong audience", k1.sign(&wrong_audience)),
        ("expired", k1.sign(&expired)),
        ("another issuer", k1.sign(&other_issuer)),
        ("alg none", none),
    ] {
        let r = list(&client(server, "/mcp", Some(&token))).await;
        assert_eq!(r.status, 401, "{what}: {}", r.text);
        assert!(
            challenge(&r).contains("error=\"invalid_token\""),
            "{what}: {}",
            challenge(&r)
        );
    }
}

/// No token reached any platform: none of the fakes' recent requests carried one.
async fn no_token_was_passed_on(f: &Fakes, server: &Server, alice: &str) {
    for fake in f.all.iter() {
        for headers in fake.recent_headers() {
            assert!(
                !headers.to_ascii_lowercase().contains("authorization") && !headers.contains(alice),
                "{:?} saw {headers}",
                fake.platform()
            );
        }
        for path in fake.recent_paths() {
            assert!(!path.contains(alice), "{:?} saw the token in {path}", fake.platform());
        }
    }
    // Nor a page of the server's own.
    let status = reqwest::get(server.url("/status.json"))
        .await
        .expect("status")
        .text()
        .await
        .unwrap_or_default();
    assert!(!status.contains(alice));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_users_behind_one_address_are_limited_apart() {
    let f = fakes().await;
    let k1 = Key::new("k1", 1);
    let issuer = Issuer::start(&[&k1]).await;
    let mut cfg = auth_config(&f, &issuer, AuthMode::Required, "auth-limits");
    let roomy = RateLimit {
        requests_per_minute: 60_000,
        burst: 10_000,
    };
    cfg.mcp_rate_limit.process = roomy;
    cfg.mcp_rate_limit.per_connector = roomy;
    cfg.mcp_rate_limit.per_session = roomy;
    // Per address both would be one client with a burst of 2; per user each has 4.
    cfg.mcp_rate_limit.per_address = RateLimit {
        requests_per_minute: 2,
        burst: 2,
    };
    cfg.mcp_rate_limit.per_user = RateLimit {
        requests_per_minute: 4,
        burst: 4,
    };
    let server = Server::start(cfg).await;
    let heavy = client(&server, "/mcp", Some(&k1.sign(&issuer.claims("heavy"))));
    let light = client(&server, "/mcp", Some(&k1.sign(&issuer.claims("light"))));
    for n in 0..4 {
        assert_eq!(list(&heavy).await.status, 200, "heavy's request {n}");
    }
    let refused = list(&heavy).await;
    assert_eq!(refused.status, 429, "{}", refused.text);
    assert!(refused.text.contains("user request limit"), "{}", refused.text);
    // The other user behind the same address is served.
    let served = list(&light).await;
    assert_eq!(served.status, 200, "{}", served.text);
    // The heavy user with a new token is still the heavy user.
    let again = client(&server, "/mcp/obv", Some(&k1.sign(&issuer.claims("heavy"))));
    assert_eq!(list(&again).await.status, 429);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_opened_with_a_token_is_its_users_alone() {
    let f = fakes().await;
    let k1 = Key::new("k1", 1);
    let issuer = Issuer::start(&[&k1]).await;
    let server = Server::start(auth_config(&f, &issuer, AuthMode::Optional, "auth-sessions")).await;
    let alice = k1.sign(&issuer.claims("alice"));
    let bob = k1.sign(&issuer.claims("bob"));

    // Optional: without a token, served as before.
    let anonymous = list(&client(&server, "/mcp", None)).await;
    assert_eq!(anonymous.status, 200, "{}", anonymous.text);
    // An invalid token is refused, never served as if none was sent.
    let r = list(&client(&server, "/mcp", Some("not.a.token"))).await;
    assert_eq!(r.status, 401, "{}", r.text);

    let mut a = Mcp::new(server.url("/mcp"));
    a.extra_headers
        .push(("authorization".to_owned(), format!("Bearer {alice}")));
    let r = a
        .post(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "auth-test", "version": "1"}}}))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    a.session = r
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let session = a.session.clone().expect("a session id");
    let n = a
        .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    assert!(n.status == 200 || n.status == 202, "{}", n.text);
    assert_eq!(list(&a).await.status, 200, "alice uses her session");

    // Bob, or nobody, naming Alice's session: no such session.
    for token in [Some(bob.as_str()), None] {
        let mut other = Mcp::new(server.url("/mcp"));
        other.session = Some(session.clone());
        if let Some(t) = token {
            other
                .extra_headers
                .push(("authorization".to_owned(), format!("Bearer {t}")));
        }
        let r = list(&other).await;
        assert_eq!(r.status, 404, "{token:?}: {}", r.text);
    }
    assert_eq!(list(&a).await.status, 200, "still hers");
    server.stop().await;
}
