//! Who is asking: the one rule that turns what a shell knows about a request into the
//! keys of fairness (the platforms' fair queues) and of the client limits.
//!
//! A request may come with an authenticated user (an OAuth access token's `iss` and
//! `sub`, reduced by the shell to an opaque user key), an MCP session, and always a
//! client address. The rule:
//!
//! - **fairness** ([`Who::fairness_key`]): the user when there is one, else the session,
//!   else the address. A user is one caller however many sessions and addresses it uses;
//!   two users behind one address (a hosted assistant) are two callers.
//! - **client limits** ([`Who::client`], [`Who::session_limit_key`]): the client layer
//!   counts the user (at the per-user rate) or else the address (at the per-address rate);
//!   the session layer counts the session, else the fairness key.
//!
//! The server's guard and the simulator both call these functions, so what the simulator
//! shows about per-user fairness is what the server does.
//!
//! What this module does not do: authenticate. The user key is whatever the shell
//! vouches for; making it from a token (and refusing a bad token) is the server's.

use crate::limits::Client;
use crate::scheduler::SessionKey;

/// Which identity keys fairness for requests that carry no user: the rule of a
/// deployment without tokens, or with them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IdentityRule {
    /// Every named caller is its own key: a session of its own (the simulator's default,
    /// and the server's for an MCP session).
    #[default]
    PerSession,
    /// Callers without a session are known by their client address only: everyone behind
    /// one address is one caller (a hosted assistant without tokens).
    PerAddress,
    /// Callers carry an authenticated user: each user is one caller.
    PerUser,
}

impl IdentityRule {
    /// What a request of `user` in `session` from `address` is known as under this rule:
    /// per session, a session's name (no user); per address, only the address; per user,
    /// the user (and the session, which the user's key outranks).
    pub fn who<'a>(self, user: Option<&'a str>, session: Option<&'a str>, address: &'a str) -> Who<'a> {
        match self {
            IdentityRule::PerSession => Who {
                user: None,
                session,
                address,
            },
            IdentityRule::PerAddress => Who {
                user: None,
                session: None,
                address,
            },
            IdentityRule::PerUser => Who { user, session, address },
        }
    }
}

/// What a shell knows about one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Who<'a> {
    /// The authenticated user's opaque key, when a valid token came with the request.
    pub user: Option<&'a str>,
    /// The MCP session the request belongs to (one that exists), if any.
    pub session: Option<&'a str>,
    /// The client address (IPv6 per /64).
    pub address: &'a str,
}

impl<'a> Who<'a> {
    /// The fairness key: `user:<key>`, else `session:<id>`, else `addr:<address>`.
    pub fn fairness_key(&self) -> SessionKey {
        SessionKey::client(&self.fairness_text())
    }

    /// [`Who::fairness_key`] as text.
    pub fn fairness_text(&self) -> String {
        let (prefix, rest) = match (self.user, self.session) {
            (Some(user), _) => ("user:", user),
            (None, Some(session)) => ("session:", session),
            (None, None) => ("addr:", self.address),
        };
        let mut key = String::with_capacity(prefix.len() + rest.len());
        key.push_str(prefix);
        key.push_str(rest);
        key
    }

    /// The key of the client-limit layer over all of a caller's sessions: its user, else
    /// its address.
    pub fn client(&self) -> Client<'a> {
        match self.user {
            Some(user) => Client::User(user),
            None => Client::Address(self.address),
        }
    }

    /// The key of the session layer of the client limits: `session:<id>` for a request of
    /// a session, else the fairness key.
    pub fn session_limit_key(&self) -> String {
        match self.session {
            Some(session) => Who {
                user: None,
                session: Some(session),
                address: self.address,
            }
            .fairness_text(),
            None => self.fairness_text(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_user_wins_over_the_session_and_the_session_over_the_address() {
        let user = Who {
            user: Some("u1"),
            session: Some("s1"),
            address: "192.0.2.1",
        };
        assert_eq!(user.fairness_key(), SessionKey::client("user:u1"));
        assert_eq!(user.client(), Client::User("u1"));
        assert_eq!(user.session_limit_key(), "session:s1");
        let session = Who { user: None, ..user };
        assert_eq!(session.fairness_key(), SessionKey::client("session:s1"));
        assert_eq!(session.client(), Client::Address("192.0.2.1"));
        let address = Who {
            session: None,
            ..session
        };
        assert_eq!(address.fairness_key(), SessionKey::client("addr:192.0.2.1"));
        assert_eq!(address.session_limit_key(), "addr:192.0.2.1");
        let stateless_user = Who { session: None, ..user };
        assert_eq!(stateless_user.session_limit_key(), "user:u1");
    }

    #[test]
    fn two_users_behind_one_address_are_two_callers_and_one_user_anywhere_is_one() {
        let a = Who {
            user: Some("a"),
            session: None,
            address: "198.51.100.7",
        };
        let b = Who { user: Some("b"), ..a };
        assert_ne!(a.fairness_key(), b.fairness_key());
        let a_elsewhere = Who {
            address: "203.0.113.9",
            session: Some("other"),
            ..a
        };
        assert_eq!(a.fairness_key(), a_elsewhere.fairness_key());
        assert_eq!(a.client(), a_elsewhere.client());
    }
}
