//! The resource-server side of the MCP authorization spec: who a bearer token says is
//! asking (`BesluitBron.Auth`).
//!
//! A request's `Authorization: Bearer …` is a JWT access token of the configured issuer:
//! signed by one of the issuer's keys (its JWKS, [`keys`]) with RS256, ES256 or EdDSA
//! (`none` and HMAC are refused: a shared secret would let anyone holding it mint
//! users), `iss` the issuer, `aud` the configured `Resource` (RFC 8707), `exp` and `nbf`
//! within [`LEEWAY`] of the server's clock, a `sub`, and the configured scopes. Its user
//! is `iss` + `sub`, reduced to an opaque [`User`] key: that is what fairness and the
//! client limits see.
//!
//! The other half: Protected Resource Metadata (RFC 9728, [`Auth::metadata`]) and the
//! `WWW-Authenticate` challenge of a 401/403 ([`Refusal::response`]) that points to it.
//!
//! Invariants:
//! - with `Mode = optional` a request without a token goes on as without auth, and one
//!   with a token that does not pass is refused — never served as if it had none;
//! - the token itself goes nowhere: not to a platform, a log, a trace, a metric or a
//!   page; what travels on is the [`User`] key;
//! - token times are read from the server's [`Clock`] (its wall time), as every other
//!   time.
//!
//! What this module does not do: issue tokens, talk OAuth flows, or introspect opaque
//! tokens (an issuer must issue JWT access tokens for the resource).

pub mod keys;

use std::time::Duration;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, JwkSet, KeyAlgorithm};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::json;
use sha2::Digest;

use crate::clock::Clock;
use crate::config::{AuthConfig, AuthMode};
use keys::{IssuerKeys, KeysError};

/// How far a token's `exp` and `nbf` may be off the server's clock.
pub const LEEWAY: Duration = Duration::from_secs(60);

/// The signature algorithms accepted.
pub const ALGORITHMS: [Algorithm; 3] = [Algorithm::RS256, Algorithm::ES256, Algorithm::EdDSA];

/// The path of the Protected Resource Metadata (RFC 9728); an MCP address's own is this
/// path followed by the address (`/.well-known/oauth-protected-resource/mcp`).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// An authenticated user: an opaque key of its issuer and subject, as fairness and the
/// client limits count it. It says nothing of who the user is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct User(String);

impl User {
    /// The user of subject `sub` at issuer `iss`: the first 128 bits of
    /// SHA-256(`iss` NUL `sub`) in hex, so one subject of two issuers are two users.
    pub fn of(iss: &str, sub: &str) -> User {
        let mut h = sha2::Sha256::new();
        h.update(iss.as_bytes());
        h.update([0]);
        h.update(sub.as_bytes());
        let digest = h.finalize();
        User(digest[..16].iter().map(|b| format!("{b:02x}")).collect())
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What a request's token says.
#[derive(Debug)]
pub enum Verdict {
    /// No token, and none is required: the request goes on as without auth.
    Anonymous,
    /// A valid token of this user.
    User(User),
    /// Refused.
    Refused(Refusal),
}

/// Why a request is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No token where one is required: 401 with the metadata link.
    Missing,
    /// A token that does not pass (why, for the answer's description; never the token).
    Invalid(String),
    /// A valid token without the required scopes: 403.
    InsufficientScope,
    /// The issuer's keys cannot be read and none are kept: 503.
    IssuerUnavailable,
}

impl Refusal {
    /// The answer: 401 with `WWW-Authenticate: Bearer resource_metadata="…"` (and
    /// `error="invalid_token"` for a token sent and refused), 403 `insufficient_scope`,
    /// or 503 with `Retry-After`. The body is a JSON-RPC error, as the guard's others.
    pub fn response(&self, metadata_url: &str, scopes: &[String]) -> Response {
        let scope = (!scopes.is_empty()).then(|| format!(", scope=\"{}\"", scopes.join(" ")));
        let scope = scope.as_deref().unwrap_or("");
        let (status, challenge, message) = match self {
            Refusal::Missing => (
                StatusCode::UNAUTHORIZED,
                format!("Bearer resource_metadata=\"{metadata_url}\"{scope}"),
                "BesluitBron asks for an access token here (OAuth; see the resource metadata)".to_owned(),
            ),
            Refusal::Invalid(why) => (
                StatusCode::UNAUTHORIZED,
                format!(
                    "Bearer resource_metadata=\"{metadata_url}\", error=\"invalid_token\", error_description=\"{}\"",
                    why.replace(['"', '\\'], "'")
                ),
                format!("the access token was refused: {why}"),
            ),
            Refusal::InsufficientScope => (
                StatusCode::FORBIDDEN,
                format!("Bearer resource_metadata=\"{metadata_url}\", error=\"insufficient_scope\"{scope}"),
                "the access token lacks a scope BesluitBron asks for".to_owned(),
            ),
            Refusal::IssuerUnavailable => {
                let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000,
                    "message": "BesluitBron cannot read the authorization server's keys just now; retry shortly"}});
                let mut r = (StatusCode::SERVICE_UNAVAILABLE, axum::Json(body)).into_response();
                r.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
                return r;
            }
        };
        let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32001, "message": message}});
        let mut r = (status, axum::Json(body)).into_response();
        if let Ok(v) = HeaderValue::from_str(&challenge) {
            r.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
        r
    }
}

/// The claims read from a token.
#[derive(serde::Deserialize)]
struct Claims {
    iss: String,
    sub: String,
    exp: u64,
    #[serde(default)]
    nbf: Option<u64>,
    /// Space-separated scopes (RFC 8693, RFC 9068).
    #[serde(default)]
    scope: Option<String>,
    /// Scopes as some issuers write them (Entra ID, Okta): a list or a string.
    #[serde(default)]
    scp: Option<serde_json::Value>,
}

impl Claims {
    fn scopes(&self) -> Vec<&str> {
        let mut out: Vec<&str> = self.scope.as_deref().unwrap_or("").split_whitespace().collect();
        match &self.scp {
            Some(serde_json::Value::String(s)) => out.extend(s.split_whitespace()),
            Some(serde_json::Value::Array(items)) => out.extend(items.iter().filter_map(|v| v.as_str())),
            _ => {}
        }
        out
    }
}

/// The token checks of one server: the settings, the issuer's keys, the clock.
pub struct Auth {
    config: AuthConfig,
    keys: IssuerKeys,
    clock: Clock,
}

impl Auth {
    /// The checks `config` asks for, or `None` with `Mode = off`. The issuer's keys are
    /// read when the first token arrives.
    pub fn new(config: &AuthConfig, contact: &str, clock: Clock) -> anyhow::Result<Option<Auth>> {
        if config.mode == AuthMode::Off {
            return Ok(None);
        }
        let http = reqwest::Client::builder()
            .user_agent(crate::platforms::http::user_agent(contact))
            .connect_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Some(Auth {
            keys: IssuerKeys::new(config.issuer.clone(), http, clock),
            config: config.clone(),
            clock,
        }))
    }

    /// The settings.
    pub fn config(&self) -> &AuthConfig {
        &self.config
    }

    /// What the request's `Authorization` header says.
    pub async fn check(&self, headers: &HeaderMap) -> Verdict {
        let Some(value) = headers.get(header::AUTHORIZATION) else {
            return match self.config.mode {
                AuthMode::Required => Verdict::Refused(Refusal::Missing),
                AuthMode::Optional | AuthMode::Off => Verdict::Anonymous,
            };
        };
        let Some(token) = value.to_str().ok().and_then(bearer) else {
            return Verdict::Refused(Refusal::Invalid("not a Bearer token".to_owned()));
        };
        match self.user_of(token).await {
            Ok(user) => Verdict::User(user),
            Err(refusal) => Verdict::Refused(refusal),
        }
    }

    /// The user of a valid `token`.
    async fn user_of(&self, token: &str) -> Result<User, Refusal> {
        let invalid = |why: &str| Refusal::Invalid(why.to_owned());
        let head =
            jsonwebtoken::decode_header(token).map_err(|_| invalid("not a signed JWT of an accepted algorithm"))?;
        if !ALGORITHMS.contains(&head.alg) {
            return Err(invalid("signed with an algorithm BesluitBron does not accept"));
        }
        let keys = match self.keys.keys_for(head.kid.as_deref()).await {
            Ok(keys) => keys,
            Err(KeysError::Unavailable(_)) => return Err(Refusal::IssuerUnavailable),
        };
        let candidates = candidates(&keys, head.kid.as_deref(), head.alg);
        if candidates.is_empty() {
            return Err(invalid("signed by a key the authorization server does not publish"));
        }
        let mut validation = Validation::new(head.alg);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        // Times are checked below on the server's clock.
        validation.validate_exp = false;
        validation.validate_nbf = false;
        validation.set_issuer(&[&self.config.issuer]);
        validation.set_audience(&[&self.config.resource]);
        let mut last = None;
        let mut claims = None;
        for key in candidates {
            match jsonwebtoken::decode::<Claims>(token, &key, &validation) {
                Ok(data) => {
                    claims = Some(data.claims);
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        let Some(claims) = claims else {
            use jsonwebtoken::errors::ErrorKind;
            let why = match last.as_ref().map(|e| e.kind()) {
                Some(ErrorKind::InvalidIssuer) => "issued by another authorization server",
                Some(ErrorKind::InvalidAudience) => "meant for another resource (audience)",
                Some(ErrorKind::MissingRequiredClaim(_)) => "lacks iss, aud, sub or exp",
                Some(ErrorKind::InvalidSignature) => "its signature does not verify",
                _ => "not a valid access token",
            };
            return Err(invalid(why));
        };
        let now_s = self.clock.wall().0 / 1000;
        if claims.exp.saturating_add(LEEWAY.as_secs()) < now_s {
            return Err(invalid("expired"));
        }
        if claims
            .nbf
            .is_some_and(|nbf| nbf > now_s.saturating_add(LEEWAY.as_secs()))
        {
            return Err(invalid("not valid yet"));
        }
        if claims.sub.is_empty() {
            return Err(invalid("names no subject"));
        }
        let held = claims.scopes();
        if !self.config.scopes.iter().all(|s| held.contains(&s.as_str())) {
            return Err(Refusal::InsufficientScope);
        }
        Ok(User::of(&claims.iss, &claims.sub))
    }

    /// The Protected Resource Metadata (RFC 9728) document.
    pub fn metadata(&self) -> serde_json::Value {
        let mut doc = json!({
            "resource": self.config.resource,
            "authorization_servers": [self.config.issuer],
            "bearer_methods_supported": ["header"],
            "resource_name": "BesluitBron",
        });
        if !self.config.scopes.is_empty() {
            doc["scopes_supported"] = json!(self.config.scopes);
        }
        doc
    }

    /// The metadata's URL for a request at `path` (an MCP address): on the resource's
    /// origin, [`METADATA_PATH`] followed by the address.
    pub fn metadata_url(&self, path: &str) -> String {
        let origin = reqwest::Url::parse(&self.config.resource)
            .map(|u| u.origin().ascii_serialization())
            .unwrap_or_default();
        format!("{origin}{METADATA_PATH}{path}")
    }

    /// The answer to a refusal of a request at `path`.
    pub fn refuse(&self, refusal: &Refusal, path: &str) -> Response {
        refusal.response(&self.metadata_url(path), &self.config.scopes)
    }
}

/// The token of a `Bearer` credential (the scheme in any case).
fn bearer(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// The keys of `keys` that may have signed a token of `alg` naming `kid`: the one with
/// that id, or without an id every key of the algorithm's type; never a symmetric key,
/// and never one whose declared algorithm or use is another.
fn candidates(keys: &JwkSet, kid: Option<&str>, alg: Algorithm) -> Vec<DecodingKey> {
    keys.keys
        .iter()
        .filter(|k| kid.is_none_or(|kid| k.common.key_id.as_deref() == Some(kid)))
        .filter(|k| fits(k, alg))
        .filter_map(|k| DecodingKey::from_jwk(k).ok())
        .collect()
}

/// Whether `key` is of `alg`'s type, declares no other algorithm and is not for
/// encryption only.
fn fits(key: &Jwk, alg: Algorithm) -> bool {
    use jsonwebtoken::jwk::{EllipticCurve, PublicKeyUse};
    let of_type = match (&key.algorithm, alg) {
        (AlgorithmParameters::RSA(_), Algorithm::RS256) => true,
        (AlgorithmParameters::EllipticCurve(p), Algorithm::ES256) => p.curve == EllipticCurve::P256,
        (AlgorithmParameters::OctetKeyPair(p), Algorithm::EdDSA) => p.curve == EllipticCurve::Ed25519,
        _ => false,
    };
    let declared = key.common.key_algorithm.is_none_or(|a| {
        matches!(
            (a, alg),
            (KeyAlgorithm::RS256, Algorithm::RS256)
                | (KeyAlgorithm::ES256, Algorithm::ES256)
                | (KeyAlgorithm::EdDSA, Algorithm::EdDSA)
        )
    });
    let for_signing = !matches!(key.common.public_key_use, Some(PublicKeyUse::Encryption));
    of_type && declared && for_signing
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use base64::Engine as _;
    use ed25519_dalek::{Signer, SigningKey};
    use serde_json::Value;

    use super::*;

    const RESOURCE: &str = "http://127.0.0.1:8080/mcp";

    fn b64(bytes: &[u8]) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    }

    /// An ed25519 key of the test, from `seed`.
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
            let signature = self.signing.sign(input.as_bytes());
            format!("{input}.{}", b64(&signature.to_bytes()))
        }
    }

    /// A loopback issuer: OpenID discovery and a JWKS that the test may change, and the
    /// number of JWKS fetches.
    struct Issuer {
        url: String,
        jwks: Arc<std::sync::Mutex<Value>>,
        fetches: Arc<AtomicUsize>,
    }

    async fn issuer(keys: &[&Key]) -> Issuer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let jwks = Arc::new(std::sync::Mutex::new(
            json!({"keys": keys.iter().map(|k| k.jwk()).collect::<Vec<_>>()}),
        ));
        let fetches = Arc::new(AtomicUsize::new(0));
        let discovery = json!({"issuer": url, "jwks_uri": format!("{url}/jwks")});
        let (j, f) = (Arc::clone(&jwks), Arc::clone(&fetches));
        let app = axum::Router::new()
            .route(
                "/.well-known/openid-configuration",
                axum::routing::get(move || async move { axum::Json(discovery) }),
            )
            .route(
                "/jwks",
                axum::routing::get(move || async move {
                    f.fetch_add(1, Ordering::SeqCst);
                    let body = j.lock().expect("jwks").clone();
                    axum::Json(body)
                }),
            );
        tokio::spawn(async move { axum::serve(listener, app).await });
        Issuer { url, jwks, fetches }
    }

    fn auth(issuer: &str, mode: AuthMode, scopes: &[&str]) -> Auth {
        let config = AuthConfig {
            mode,
            issuer: issuer.to_owned(),
            resource: RESOURCE.to_owned(),
            scopes: scopes.iter().map(|s| (*s).to_owned()).collect(),
        };
        Auth::new(&config, "test", Clock::start()).expect("client").expect("on")
    }

    fn claims(issuer: &str, sub: &str) -> Value {
        let now = crate::clock::wall_now().0 / 1000;
        json!({"iss": issuer, "sub": sub, "aud": RESOURCE, "exp": now + 300, "iat": now, "scope": "openid mcp"})
    }

    fn bearer_headers(token: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            header::AUTHORIZATION,
            format!("Bearer {token}").parse().expect("header"),
        );
        h
    }

    async fn verdict(auth: &Auth, token: &str) -> Verdict {
        auth.check(&bearer_headers(token)).await
    }

    fn refused_as(v: Verdict) -> String {
        match v {
            Verdict::Refused(Refusal::Invalid(why)) => why,
            other => panic!("expected an invalid token, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_valid_token_names_its_user_and_one_subject_is_one_user() {
        let k1 = Key::new("k1", 1);
        let iss = issuer(&[&k1]).await;
        let auth = auth(&iss.url, AuthMode::Required, &[]);
        let alice = match verdict(&auth, &k1.sign(&claims(&iss.url, "alice"))).await {
            Verdict::User(u) => u,
            other => panic!("{other:?}"),
        };
        assert_eq!(alice, User::of(&iss.url, "alice"));
        assert_ne!(alice, User::of(&iss.url, "bob"));
        assert_ne!(alice, User::of("https://other.example", "alice"));
        assert_eq!(alice.as_str().len(), 32);
        // Its metadata link and document.
        assert_eq!(
            auth.metadata_url("/mcp"),
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(auth.metadata()["resource"], RESOURCE);
        assert_eq!(auth.metadata()["authorization_servers"][0], iss.url.as_str());
    }

    #[tokio::test]
    async fn tokens_that_do_not_pass_are_refused_whatever_the_mode() {
        let k1 = Key::new("k1", 1);
        let stranger = Key::new("k1", 9);
        let iss = issuer(&[&k1]).await;
        for mode in [AuthMode::Optional, AuthMode::Required] {
            let auth = auth(&iss.url, mode, &[]);
            let mut wrong_aud = claims(&iss.url, "a");
            wrong_aud["aud"] = json!("https://elsewhere.example/mcp");
            assert!(refused_as(verdict(&auth, &k1.sign(&wrong_aud)).await).contains("audience"));
            let mut expired = claims(&iss.url, "a");
            expired["exp"] = json!(crate::clock::wall_now().0 / 1000 - 120);
            assert_eq!(refused_as(verdict(&auth, &k1.sign(&expired)).await), "expired");
            let mut early = claims(&iss.url, "a");
            early["nbf"] = json!(crate::clock::wall_now().0 / 1000 + 600);
            assert_eq!(refused_as(verdict(&auth, &k1.sign(&early)).await), "not valid yet");
            let other_issuer = claims("https://other.example", "a");
            assert!(refused_as(verdict(&auth, &k1.sign(&other_issuer)).await).contains("another authorization server"));
            // Same key id, another key: the signature does not verify.
            assert!(refused_as(verdict(&auth, &stranger.sign(&claims(&iss.url, "a"))).await).contains("signature"));
            // `alg: none`, unsigned.
            let none = format!(
                "{}.{}.",
                b64(br#"{"alg":"none","typ":"JWT"}"#),
                b64(claims(&iss.url, "a").to_string().as_bytes())
            );
            refused_as(verdict(&auth, &none).await);
            // HMAC with the public key as the secret (the classic confusion).
            let hs = jsonwebtoken::encode(
                &jsonwebtoken::Header {
                    kid: Some("k1".into()),
                    ..jsonwebtoken::Header::new(Algorithm::HS256)
                },
                &claims(&iss.url, "a"),
                &jsonwebtoken::EncodingKey::from_secret(&k1.signing.verifying_key().to_bytes()).expect("a secret"),
            )
            .expect("an HS256 token");
            assert!(refused_as(verdict(&auth, &hs).await).contains("algorithm"));
            let mut no_sub = claims(&iss.url, "a");
            no_sub.as_object_mut().expect("object").remove("sub");
            refused_as(verdict(&auth, &k1.sign(&no_sub)).await);
            refused_as(verdict(&auth, "not-a-jwt").await);
            let mut basic = HeaderMap::new();
            basic.insert(header::AUTHORIZATION, "Basic dXNlcjpwYXNz".parse().expect("header"));
            refused_as(auth.check(&basic).await);
        }
    }

    #[tokio::test]
    async fn without_a_token_optional_goes_on_and_required_refuses() {
        let iss = issuer(&[]).await;
        assert!(matches!(
            auth(&iss.url, AuthMode::Optional, &[]).check(&HeaderMap::new()).await,
            Verdict::Anonymous
        ));
        assert!(matches!(
            auth(&iss.url, AuthMode::Required, &[]).check(&HeaderMap::new()).await,
            Verdict::Refused(Refusal::Missing)
        ));
        // Nothing was fetched for a request without a token.
        assert_eq!(iss.fetches.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn scopes_asked_for_must_all_be_held() {
        let k1 = Key::new("k1", 1);
        let iss = issuer(&[&k1]).await;
        let auth = auth(&iss.url, AuthMode::Required, &["mcp", "besluitbron"]);
        let v = verdict(&auth, &k1.sign(&claims(&iss.url, "a"))).await;
        assert!(matches!(v, Verdict::Refused(Refusal::InsufficientScope)), "{v:?}");
        let mut both = claims(&iss.url, "a");
        both["scp"] = json!(["besluitbron"]);
        assert!(matches!(verdict(&auth, &k1.sign(&both)).await, Verdict::User(_)));
        let r = Refusal::InsufficientScope.response(&auth.metadata_url("/mcp"), &auth.config.scopes);
        assert_eq!(r.status(), StatusCode::FORBIDDEN);
        let challenge = r.headers()[header::WWW_AUTHENTICATE].to_str().expect("text");
        assert!(challenge.contains("error=\"insufficient_scope\""), "{challenge}");
        assert!(challenge.contains("scope=\"mcp besluitbron\""), "{challenge}");
    }

    #[tokio::test]
    async fn a_rotated_key_is_taken_at_once_and_made_up_ids_do_not_flood_the_issuer() {
        let k1 = Key::new("k1", 1);
        let k2 = Key::new("k2", 2);
        let iss = issuer(&[&k1]).await;
        let auth = auth(&iss.url, AuthMode::Required, &[]);
        assert!(matches!(
            verdict(&auth, &k1.sign(&claims(&iss.url, "a"))).await,
            Verdict::User(_)
        ));
        assert_eq!(iss.fetches.load(Ordering::SeqCst), 1);
        *iss.jwks.lock().expect("jwks") = json!({"keys": [k1.jwk(), k2.jwk()]});
        assert!(matches!(
            verdict(&auth, &k2.sign(&claims(&iss.url, "a"))).await,
            Verdict::User(_)
        ));
        assert_eq!(iss.fetches.load(Ordering::SeqCst), 2);
        for n in 0..5 {
            let made_up = Key::new(&format!("made-up-{n}"), 7);
            assert!(
                refused_as(verdict(&auth, &made_up.sign(&claims(&iss.url, "a"))).await).contains("does not publish")
            );
        }
        assert_eq!(
            iss.fetches.load(Ordering::SeqCst),
            2,
            "no fetch for made-up ids within 30 s of the last one for an unknown id"
        );
    }

    #[tokio::test]
    async fn an_issuer_that_cannot_be_read_is_a_503_not_a_pass() {
        let k1 = Key::new("k1", 1);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        drop(listener);
        let auth = auth(&url, AuthMode::Optional, &[]);
        let v = verdict(&auth, &k1.sign(&claims(&url, "a"))).await;
        assert!(matches!(v, Verdict::Refused(Refusal::IssuerUnavailable)), "{v:?}");
        let r = auth.refuse(&Refusal::IssuerUnavailable, "/mcp");
        assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    }

    #[test]
    fn the_challenge_links_the_metadata_and_says_invalid_token_only_for_a_token_sent() {
        let url = "https://b.example/.well-known/oauth-protected-resource/mcp";
        let missing = Refusal::Missing.response(url, &[]);
        assert_eq!(missing.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            missing.headers()[header::WWW_AUTHENTICATE],
            format!("Bearer resource_metadata=\"{url}\"").as_str()
        );
        let invalid = Refusal::Invalid("expired".into()).response(url, &[]);
        assert_eq!(invalid.status(), StatusCode::UNAUTHORIZED);
        let challenge = invalid.headers()[header::WWW_AUTHENTICATE].to_str().expect("text");
        assert!(challenge.starts_with(&format!("Bearer resource_metadata=\"{url}\", error=\"invalid_token\"")));
    }
}
