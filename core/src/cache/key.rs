//! Cache keys: which request a buffered answer belongs to.
//!
//! A [`CacheKey`] is (platform, data class, operation, canonical parameters, scope).
//!
//! Invariants:
//! - Parameters live in a `BTreeMap`, so the order in which a caller adds them never
//!   matters: `?a=1&b=2` and `?b=2&a=1` are one key.
//! - [`CacheKey::encode`] is injective: every variable-length field is length-prefixed,
//!   so two different keys never share bytes ([`CacheKey::decode`] inverts it exactly,
//!   which a property test checks). The bytes are the database key.
//! - A key carries its [`Scope`]: a tenant-scoped answer never matches a public key or
//!   another tenant's or user's key (R-D7).
//!
//! What this module does not do: fill in defaults or normalise values. The connector
//! knows its operation's defaults and fills them in before it builds a key; two values
//! that differ in any byte are two different requests.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::PlatformId;
use crate::cache::policy::DataClass;

/// Who may see an answer: everybody, or one user of one tenant (R-D7).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// A public answer, the same for every caller. The default: the platforms are public.
    #[default]
    Public,
    /// An answer that depends on permissions: only this user of this tenant gets it.
    Tenant {
        /// The tenant (organisation) the answer belongs to.
        tenant: String,
        /// The user within the tenant.
        user: String,
    },
}

/// The identity of one request to one platform, canonicalised.
///
/// Its parts are shared: a clone (a flight's, an attempt's, an event's) is a reference
/// count, not a copy of its text. Compared, ordered, hashed and shown as its parts are.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CacheKey(Arc<KeyParts>);

/// What a [`CacheKey`] is made of.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct KeyParts {
    platform: PlatformId,
    class: DataClass,
    operation: String,
    params: BTreeMap<String, String>,
    scope: Scope,
}

impl fmt::Debug for CacheKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let k = &*self.0;
        f.debug_struct("CacheKey")
            .field("platform", &k.platform)
            .field("class", &k.class)
            .field("operation", &k.operation)
            .field("params", &k.params)
            .field("scope", &k.scope)
            .finish()
    }
}

/// Bytes that are not an encoded [`CacheKey`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KeyDecodeError {
    /// The bytes end inside a field.
    #[error("cache key truncated")]
    Truncated,
    /// The bytes do not start with the key format tag.
    #[error("not a cache key (format tag {0:#04x})")]
    UnknownFormat(u8),
    /// A field that must be text is not UTF-8.
    #[error("cache key field is not UTF-8")]
    NotUtf8,
    /// The platform or class name is not one of ours, or the scope tag is unknown.
    #[error("cache key names an unknown {0}")]
    Unknown(&'static str),
    /// Bytes follow the last field, or parameters are out of order or repeated.
    #[error("cache key is not canonical")]
    NotCanonical,
}

/// The first byte of every encoded key; a future layout gets a new tag.
const KEY_FORMAT: u8 = 1;

impl CacheKey {
    /// A public key without parameters for `operation` at `platform`, answering data of `class`.
    pub fn new(platform: PlatformId, class: DataClass, operation: impl Into<String>) -> CacheKey {
        CacheKey(Arc::new(KeyParts {
            platform,
            class,
            operation: operation.into(),
            params: BTreeMap::new(),
            scope: Scope::Public,
        }))
    }

    /// The key with parameter `name` set to `value` (a repeated name keeps the last value).
    pub fn param(mut self, name: impl Into<String>, value: impl Into<String>) -> CacheKey {
        Arc::make_mut(&mut self.0).params.insert(name.into(), value.into());
        self
    }

    /// The key restricted to `scope`.
    pub fn scoped(mut self, scope: Scope) -> CacheKey {
        Arc::make_mut(&mut self.0).scope = scope;
        self
    }

    /// The platform the request goes to; one buffer per platform (R-C1).
    pub fn platform(&self) -> PlatformId {
        self.0.platform
    }

    /// The kind of data the answer is, which sets its lifetime.
    pub fn class(&self) -> DataClass {
        self.0.class
    }

    /// The operation (tool or endpoint) name.
    pub fn operation(&self) -> &str {
        &self.0.operation
    }

    /// The parameters, in canonical (sorted) order.
    pub fn params(&self) -> &BTreeMap<String, String> {
        &self.0.params
    }

    /// Who may see the answer.
    pub fn scope(&self) -> &Scope {
        &self.0.scope
    }

    /// The stable byte encoding used as the database key.
    ///
    /// Layout: format tag, then platform, class, operation, scope and parameters, each
    /// text field as a big-endian `u32` length followed by its UTF-8 bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64);
        out.push(KEY_FORMAT);
        put_str(&mut out, self.0.platform.as_str());
        put_str(&mut out, self.0.class.as_str());
        put_str(&mut out, &self.0.operation);
        match &self.0.scope {
            Scope::Public => out.push(0),
            Scope::Tenant { tenant, user } => {
                out.push(1);
                put_str(&mut out, tenant);
                put_str(&mut out, user);
            }
        }
        put_len(&mut out, self.0.params.len());
        for (name, value) in &self.0.params {
            put_str(&mut out, name);
            put_str(&mut out, value);
        }
        out
    }

    /// Reads a key written by [`CacheKey::encode`] for one of `platforms`; the exact
    /// inverse. A key of another platform is [`KeyDecodeError::Unknown`].
    pub fn decode(bytes: &[u8], platforms: &[PlatformId]) -> Result<CacheKey, KeyDecodeError> {
        let mut r = Reader { bytes };
        let format = r.byte()?;
        if format != KEY_FORMAT {
            return Err(KeyDecodeError::UnknownFormat(format));
        }
        let name = r.str()?;
        let platform = *platforms
            .iter()
            .find(|p| p.as_str() == name)
            .ok_or(KeyDecodeError::Unknown("platform"))?;
        let class = DataClass::from_name(r.str()?).ok_or(KeyDecodeError::Unknown("data class"))?;
        let operation = r.str()?.to_owned();
        let scope = match r.byte()? {
            0 => Scope::Public,
            1 => Scope::Tenant {
                tenant: r.str()?.to_owned(),
                user: r.str()?.to_owned(),
            },
            _ => return Err(KeyDecodeError::Unknown("scope")),
        };
        let count = r.len()?;
        let mut params = BTreeMap::new();
        let mut last: Option<String> = None;
        for _ in 0..count {
            let name = r.str()?.to_owned();
            if last.as_ref().is_some_and(|l| *l >= name) {
                return Err(KeyDecodeError::NotCanonical);
            }
            let value = r.str()?.to_owned();
            last = Some(name.clone());
            params.insert(name, value);
        }
        if !r.bytes.is_empty() {
            return Err(KeyDecodeError::NotCanonical);
        }
        Ok(CacheKey(Arc::new(KeyParts {
            platform,
            class,
            operation,
            params,
            scope,
        })))
    }
}

fn put_len(out: &mut Vec<u8>, len: usize) {
    // A key field over 4 GiB is a programmer error, not an operating condition.
    let len = u32::try_from(len).expect("cache key field shorter than 4 GiB");
    out.extend_from_slice(&len.to_be_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_len(out, s.len());
    out.extend_from_slice(s.as_bytes());
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], KeyDecodeError> {
        if self.bytes.len() < n {
            return Err(KeyDecodeError::Truncated);
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn byte(&mut self) -> Result<u8, KeyDecodeError> {
        Ok(self.take(1)?[0])
    }

    fn len(&mut self) -> Result<usize, KeyDecodeError> {
        let raw: [u8; 4] = self.take(4)?.try_into().map_err(|_| KeyDecodeError::Truncated)?;
        usize::try_from(u32::from_be_bytes(raw)).map_err(|_| KeyDecodeError::Truncated)
    }

    fn str(&mut self) -> Result<&'a str, KeyDecodeError> {
        let n = self.len()?;
        std::str::from_utf8(self.take(n)?).map_err(|_| KeyDecodeError::NotUtf8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::examples;
    use quickcheck::{Arbitrary, Gen, quickcheck};

    fn search(q: &str) -> CacheKey {
        CacheKey::new(examples::OBV, DataClass::Search, "search").param("q", q)
    }

    #[test]
    fn parameter_order_does_not_matter() {
        let a = search("x").param("page", "1").param("size", "20");
        let b = CacheKey::new(examples::OBV, DataClass::Search, "search")
            .param("size", "20")
            .param("page", "1")
            .param("q", "x");
        assert_eq!(a, b);
        assert_eq!(a.encode(), b.encode());
    }

    #[test]
    fn scopes_give_different_bytes() {
        let public = search("x");
        let alice = search("x").scoped(Scope::Tenant {
            tenant: "t1".into(),
            user: "alice".into(),
        });
        let bob = search("x").scoped(Scope::Tenant {
            tenant: "t1".into(),
            user: "bob".into(),
        });
        let other_tenant = search("x").scoped(Scope::Tenant {
            tenant: "t2".into(),
            user: "alice".into(),
        });
        let all = [&public, &alice, &bob, &other_tenant].map(|k| k.encode());
        for i in 0..all.len() {
            for j in 0..i {
                assert_ne!(all[i], all[j], "keys {i} and {j} collide");
            }
        }
    }

    #[test]
    fn separators_inside_values_cannot_collide() {
        // With naive "name=value&" joining these two would be the same string.
        let a = search("x").param("a", "1&b=2");
        let b = search("x").param("a", "1").param("b", "2");
        assert_ne!(a.encode(), b.encode());
    }

    #[test]
    fn truncated_and_padded_keys_are_refused() {
        let bytes = search("x").encode();
        for n in 0..bytes.len() {
            assert!(
                CacheKey::decode(&bytes[..n], &examples::PLATFORMS).is_err(),
                "prefix of {n} bytes decoded"
            );
        }
        let mut padded = bytes.clone();
        padded.push(0);
        assert_eq!(
            CacheKey::decode(&padded, &examples::PLATFORMS),
            Err(KeyDecodeError::NotCanonical)
        );
    }

    #[derive(Clone, Debug)]
    struct AnyKey(CacheKey);

    impl Arbitrary for AnyKey {
        fn arbitrary(g: &mut Gen) -> AnyKey {
            let platform = *g.choose(&examples::PLATFORMS).expect("non-empty");
            let class = *g.choose(&DataClass::ALL).expect("non-empty");
            let mut key = CacheKey::new(platform, class, String::arbitrary(g));
            for (name, value) in Vec::<(String, String)>::arbitrary(g) {
                key = key.param(name, value);
            }
            if bool::arbitrary(g) {
                key = key.scoped(Scope::Tenant {
                    tenant: String::arbitrary(g),
                    user: String::arbitrary(g),
                });
            }
            AnyKey(key)
        }
    }

    quickcheck! {
        fn qc_key_encoding_round_trips(key: AnyKey) -> bool {
            CacheKey::decode(&key.0.encode(), &examples::PLATFORMS) == Ok(key.0)
        }

        fn qc_different_keys_have_different_bytes(a: AnyKey, b: AnyKey) -> bool {
            (a.0 == b.0) == (a.0.encode() == b.0.encode())
        }
    }
}
