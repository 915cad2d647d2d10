//! The issuer's signing keys: its metadata found once (OpenID discovery, else RFC 8414),
//! its JWKS fetched and kept.
//!
//! Invariants:
//! - the keys of the last good fetch are used for [`KEEP_THROUGH_OUTAGE`] (24 h) after it,
//!   however often a refresh fails meanwhile; after that the issuer is unavailable;
//! - a token naming a key that is not known fetches the JWKS again at most once per
//!   [`REFETCH_AT_MOST_EVERY`] (30 s), so tokens with made-up key ids cannot make
//!   BesluitBron flood the issuer (the first such token after a fetch does fetch: a key
//!   the issuer has just rotated in is taken at once); through an outage, too, the
//!   issuer is asked at most once per 30 s;
//! - one fetch at a time: requests that need keys while one runs wait for it;
//! - every answer read is bounded ([`MAX_BODY_BYTES`]) and no redirect is followed.
//!
//! What this module does not do: check tokens (`super`), or read a clock of its own
//! (instants come from the server's [`Clock`]).

use std::time::Duration;

use besluitbron_core::Instant;
use jsonwebtoken::jwk::JwkSet;
use tokio::sync::{Mutex, RwLock};

use crate::clock::Clock;

/// How long the last good keys serve while the issuer cannot be reached.
pub const KEEP_THROUGH_OUTAGE: Duration = Duration::from_secs(24 * 60 * 60);

/// The least time between two fetches for an unknown key id.
pub const REFETCH_AT_MOST_EVERY: Duration = Duration::from_secs(30);

/// Keys older than this are fetched again before they are used (a rotation that kept
/// the old key id is seen within this time).
pub const REFRESH_AFTER: Duration = Duration::from_secs(60 * 60);

/// The largest metadata or JWKS document read.
pub const MAX_BODY_BYTES: usize = 512 * 1024;

/// Why no keys are at hand.
#[derive(Debug, thiserror::Error)]
pub enum KeysError {
    /// The issuer's metadata or keys could not be read, and no good keys are kept.
    #[error("the authorization server's keys cannot be read: {0}")]
    Unavailable(String),
}

/// The keys as last fetched.
#[derive(Default)]
struct Held {
    /// The JWKS address, once the metadata named it.
    jwks_uri: Option<String>,
    /// The last good key set and when it was fetched.
    keys: Option<(JwkSet, Instant)>,
    /// When a fetch was last tried (good or not).
    tried_at: Option<Instant>,
    /// When a fetch for a key id the fresh keys did not know was last tried.
    unknown_kid_at: Option<Instant>,
    /// Why the last fetch failed, if it did.
    last_error: Option<String>,
}

/// What a request for keys does next.
#[derive(Debug)]
enum Next {
    /// Use these (fresh, and they know the key id asked for).
    Use(JwkSet),
    /// Fetch again (`unknown_kid`: because fresh keys did not know the id).
    Fetch {
        /// Fresh keys did not know the id asked for.
        unknown_kid: bool,
    },
    /// Make do with what is kept (it may be nothing).
    Kept,
}

impl Held {
    /// The rule of the module's invariants, at `now`, for a token naming `kid`.
    fn next(&self, now: Instant, kid: Option<&str>) -> Next {
        let long_ago = |t: Option<Instant>| t.is_none_or(|t| now.saturating_since(t) >= REFETCH_AT_MOST_EVERY);
        match &self.keys {
            Some((keys, at)) if now.saturating_since(*at) < REFRESH_AFTER => {
                if kid.is_none_or(|k| keys.find(k).is_some()) {
                    Next::Use(keys.clone())
                } else if long_ago(self.unknown_kid_at) {
                    // A rotation, or a made-up id.
                    Next::Fetch { unknown_kid: true }
                } else {
                    Next::Kept
                }
            }
            // None yet, or old: fetched again, but not more often through an outage.
            _ if long_ago(self.tried_at) => Next::Fetch { unknown_kid: false },
            _ => Next::Kept,
        }
    }

    /// A fetch tried at `now` came back with `fetched`.
    fn fetched(&mut self, now: Instant, unknown_kid: bool, fetched: Result<(String, JwkSet), String>) {
        self.tried_at = Some(now);
        if unknown_kid {
            self.unknown_kid_at = Some(now);
        }
        match fetched {
            Ok((jwks_uri, keys)) => {
                self.jwks_uri = Some(jwks_uri);
                self.keys = Some((keys, now));
                self.last_error = None;
            }
            Err(e) => self.last_error = Some(e),
        }
    }

    /// The kept keys while within [`KEEP_THROUGH_OUTAGE`] of their fetch.
    fn kept(&self, now: Instant) -> Result<JwkSet, KeysError> {
        match (&self.keys, &self.last_error) {
            (Some((keys, at)), _) if now.saturating_since(*at) < KEEP_THROUGH_OUTAGE => Ok(keys.clone()),
            (_, Some(e)) => Err(KeysError::Unavailable(e.clone())),
            _ => Err(KeysError::Unavailable("no keys fetched yet".to_owned())),
        }
    }
}

/// The issuer's keys, fetched on demand and kept.
pub struct IssuerKeys {
    issuer: String,
    http: reqwest::Client,
    clock: Clock,
    held: RwLock<Held>,
    /// Held for the length of a fetch: one at a time.
    fetching: Mutex<()>,
}

impl IssuerKeys {
    /// The keys of `issuer`, read over `http` when first needed.
    pub fn new(issuer: String, http: reqwest::Client, clock: Clock) -> IssuerKeys {
        IssuerKeys {
            issuer,
            http,
            clock,
            held: RwLock::new(Held::default()),
            fetching: Mutex::new(()),
        }
    }

    /// The keys to check a token with, whose header names `kid` (or none): the kept keys
    /// while they are fresh and know `kid`; else fetched again, as the module's rules
    /// allow; else the kept keys while they are within [`KEEP_THROUGH_OUTAGE`].
    pub async fn keys_for(&self, kid: Option<&str>) -> Result<JwkSet, KeysError> {
        if let Next::Use(keys) = self.held.read().await.next(self.clock.now(), kid) {
            return Ok(keys);
        }
        let _one = self.fetching.lock().await;
        // Another request may have fetched while this one waited.
        let now = self.clock.now();
        let next = self.held.read().await.next(now, kid);
        match next {
            Next::Use(keys) => return Ok(keys),
            Next::Fetch { unknown_kid } => {
                let fetched = self.fetch().await;
                let mut held = self.held.write().await;
                held.fetched(now, unknown_kid, fetched);
                if let Some(e) = &held.last_error {
                    tracing::warn!(issuer = %self.issuer, error = %e, "the authorization server's keys could not be fetched");
                }
            }
            Next::Kept => {}
        }
        self.held.read().await.kept(now)
    }

    /// The JWKS address (from the metadata, found once) and the key set there.
    async fn fetch(&self) -> Result<(String, JwkSet), String> {
        let known = self.held.read().await.jwks_uri.clone();
        let jwks_uri = match known {
            Some(uri) => uri,
            None => self.discover().await?,
        };
        let body = self.get(&jwks_uri).await?;
        let keys: JwkSet = serde_json::from_slice(&body).map_err(|e| format!("{jwks_uri}: not a JWKS ({e})"))?;
        Ok((jwks_uri, keys))
    }

    /// The `jwks_uri` of the issuer's metadata: OpenID discovery first, then RFC 8414;
    /// the metadata must name this issuer exactly.
    async fn discover(&self) -> Result<String, String> {
        let mut why = Vec::new();
        for url in metadata_urls(&self.issuer) {
            let body = match self.get(&url).await {
                Ok(body) => body,
                Err(e) => {
                    why.push(e);
                    continue;
                }
            };
            #[derive(serde::Deserialize)]
            struct Metadata {
                issuer: String,
                jwks_uri: Option<String>,
            }
            let metadata: Metadata = match serde_json::from_slice(&body) {
                Ok(m) => m,
                Err(e) => {
                    why.push(format!("{url}: not authorization server metadata ({e})"));
                    continue;
                }
            };
            if metadata.issuer != self.issuer {
                why.push(format!("{url}: names issuer {:?}", metadata.issuer));
                continue;
            }
            match metadata.jwks_uri {
                Some(uri) if uri.starts_with("https://") || uri.starts_with("http://") => return Ok(uri),
                _ => why.push(format!("{url}: names no jwks_uri")),
            }
        }
        Err(why.join("; "))
    }

    /// The body of a 200 answer to a GET of `url`, at most [`MAX_BODY_BYTES`].
    async fn get(&self, url: &str) -> Result<Vec<u8>, String> {
        let mut response = self
            .http
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| format!("{url}: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("{url}: HTTP {}", response.status().as_u16()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| format!("{url}: {e}"))? {
            if body.len() + chunk.len() > MAX_BODY_BYTES {
                return Err(format!("{url}: larger than {MAX_BODY_BYTES} bytes"));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

/// Where an issuer's metadata may be: OpenID discovery (`<issuer>/.well-known/openid-configuration`),
/// then RFC 8414 (`/.well-known/oauth-authorization-server` inserted before the issuer's path).
pub fn metadata_urls(issuer: &str) -> Vec<String> {
    let trimmed = issuer.trim_end_matches('/');
    let mut urls = vec![format!("{trimmed}/.well-known/openid-configuration")];
    if let Ok(url) = reqwest::Url::parse(issuer) {
        let path = url.path().trim_end_matches('/');
        let mut origin = url.clone();
        origin.set_path("");
        let origin = origin.as_str().trim_end_matches('/').to_owned();
        urls.push(format!("{origin}/.well-known/oauth-authorization-server{path}"));
    }
    urls
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(kids: &[&str]) -> JwkSet {
        let keys: Vec<serde_json::Value> = kids
            .iter()
            .map(|kid| serde_json::json!({"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "kid": kid}))
            .collect();
        serde_json::from_value(serde_json::json!({ "keys": keys })).expect("a JWKS")
    }

    fn at(secs: u64) -> Instant {
        Instant::from_secs(secs)
    }

    #[test]
    fn keys_are_fetched_first_then_used_while_fresh() {
        let mut held = Held::default();
        assert!(matches!(
            held.next(at(0), Some("a")),
            Next::Fetch { unknown_kid: false }
        ));
        held.fetched(at(0), false, Ok(("https://i.example/jwks".into(), set(&["a"]))));
        assert!(matches!(held.next(at(10), Some("a")), Next::Use(_)));
        assert!(matches!(held.next(at(10), None), Next::Use(_)));
        // An hour on, they are fetched again before use.
        assert!(matches!(
            held.next(at(3_600), Some("a")),
            Next::Fetch { unknown_kid: false }
        ));
    }

    #[test]
    fn an_unknown_key_id_fetches_at_once_then_at_most_every_30_s() {
        let mut held = Held::default();
        held.fetched(at(0), false, Ok(("u".into(), set(&["a"]))));
        // The issuer rotated: the first unknown id fetches even right after a fetch.
        assert!(matches!(held.next(at(1), Some("b")), Next::Fetch { unknown_kid: true }));
        held.fetched(at(1), true, Ok(("u".into(), set(&["a", "b"]))));
        assert!(matches!(held.next(at(2), Some("b")), Next::Use(_)));
        // Made-up ids: no fetch for 30 s after the last one for an unknown id.
        assert!(matches!(held.next(at(2), Some("zz")), Next::Kept));
        assert!(matches!(held.next(at(30), Some("zz")), Next::Kept));
        assert!(matches!(
            held.next(at(31), Some("zz")),
            Next::Fetch { unknown_kid: true }
        ));
    }

    #[test]
    fn the_last_good_keys_serve_for_24_hours_through_an_outage() {
        let mut held = Held::default();
        held.fetched(at(0), false, Ok(("u".into(), set(&["a"]))));
        let day = KEEP_THROUGH_OUTAGE.as_secs();
        for t in [3_600, 7_200, day - 1] {
            assert!(matches!(
                held.next(at(t), Some("a")),
                Next::Fetch { unknown_kid: false }
            ));
            held.fetched(at(t), false, Err("connection refused".into()));
            assert!(held.kept(at(t)).is_ok_and(|k| k.find("a").is_some()), "at {t} s");
            // Through the outage the issuer is asked at most once per 30 s.
            assert!(matches!(held.next(at(t + 29), Some("a")), Next::Kept));
        }
        assert!(matches!(held.kept(at(day)), Err(KeysError::Unavailable(_))));
        // Never fetched: nothing kept.
        let mut never = Held::default();
        never.fetched(at(0), false, Err("refused".into()));
        assert!(never.kept(at(1)).is_err());
        assert!(matches!(never.next(at(1), None), Next::Kept));
    }

    #[test]
    fn metadata_is_looked_for_by_openid_discovery_then_rfc_8414() {
        assert_eq!(
            metadata_urls("https://login.example/realms/besluitbron"),
            [
                "https://login.example/realms/besluitbron/.well-known/openid-configuration",
                "https://login.example/.well-known/oauth-authorization-server/realms/besluitbron",
            ]
        );
        assert_eq!(
            metadata_urls("https://tenant.auth0.example/"),
            [
                "https://tenant.auth0.example/.well-known/openid-configuration",
                "https://tenant.auth0.example/.well-known/oauth-authorization-server",
            ]
        );
    }
}
