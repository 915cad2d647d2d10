//! [`Payload`]: one platform answer as the buffer keeps it (JSON bytes) and, once a tool
//! has read it, in its typed form too, shared by every later reader.
//!
//! The bytes are what is stored and what a restart reads back; the typed form is a memo:
//! the first reader decodes (or the fetching tool hands over the value it encoded), the
//! next ones get the same `Arc` without parsing. The answer as a JSON value (a tool's
//! structured content) is memoised the same way, so a repeat answered from the buffer
//! clones a value instead of encoding the typed answer again. Answers are immutable
//! once made, and each has an [`id`](Payload::id) of its own, so what is derived from
//! one (a rendered result) can be kept beside it by whoever derives it.

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use serde::Serialize;
use serde::de::DeserializeOwned;

/// A shared answer.
pub type SharedPayload = Arc<Payload>;

/// One answer: its bytes and, once read, its typed form.
pub struct Payload {
    id: u64,
    bytes: Vec<u8>,
    typed: OnceLock<Arc<dyn Any + Send + Sync>>,
    value: OnceLock<serde_json::Value>,
}

/// The next payload's id: ids are never reused while the process runs.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

impl std::fmt::Debug for Payload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Payload({} bytes)", self.bytes.len())
    }
}

impl Payload {
    /// An answer read back from storage.
    pub fn from_bytes(bytes: Vec<u8>) -> SharedPayload {
        Arc::new(Payload {
            id: next_id(),
            bytes,
            typed: OnceLock::new(),
            value: OnceLock::new(),
        })
    }

    /// An answer a tool just got from the platform: encoded for the buffer, and kept typed.
    pub fn encode<T: Serialize + Send + Sync + 'static>(value: T) -> Result<SharedPayload, serde_json::Error> {
        let bytes = serde_json::to_vec(&value)?;
        let typed: Arc<dyn Any + Send + Sync> = Arc::new(value);
        Ok(Arc::new(Payload {
            id: next_id(),
            bytes,
            typed: OnceLock::from(typed),
            value: OnceLock::new(),
        }))
    }

    /// This answer's id: two payloads with one id are the same answer (the same bytes,
    /// read or fetched once), for as long as the process runs.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The stored bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The answer as `T`: the memo when it holds a `T`, else decoded now (and memoised
    /// when nothing was yet).
    pub fn typed<T: DeserializeOwned + Send + Sync + 'static>(&self) -> Result<Arc<T>, serde_json::Error> {
        if let Some(any) = self.typed.get()
            && let Ok(t) = Arc::clone(any).downcast::<T>()
        {
            return Ok(t);
        }
        let t = Arc::new(serde_json::from_slice::<T>(&self.bytes)?);
        let any: Arc<dyn Any + Send + Sync> = t.clone();
        let _ = self.typed.set(any);
        Ok(t)
    }
}

impl Payload {
    /// The answer as a JSON value (the bytes are its encoding): parsed once, then a
    /// clone of the memo.
    pub fn value(&self) -> Result<serde_json::Value, serde_json::Error> {
        if let Some(v) = self.value.get() {
            return Ok(v.clone());
        }
        let v: serde_json::Value = serde_json::from_slice(&self.bytes)?;
        let _ = self.value.set(v.clone());
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Hits {
        titles: Vec<String>,
    }

    #[test]
    fn an_encoded_answer_is_read_back_without_parsing_and_a_stored_one_once() {
        let p = Payload::encode(Hits {
            titles: vec!["begroting".into()],
        })
        .expect("encodes");
        let a: Arc<Hits> = p.typed().expect("typed");
        let b: Arc<Hits> = p.typed().expect("typed");
        assert!(Arc::ptr_eq(&a, &b), "the memo, not a second decode");
        let stored = Payload::from_bytes(p.bytes().to_vec());
        let c: Arc<Hits> = stored.typed().expect("decodes");
        assert_eq!(*c, *a);
        assert!(Arc::ptr_eq(&c, &stored.typed::<Hits>().expect("memo")));
    }

    #[test]
    fn unreadable_bytes_are_an_error_not_a_default() {
        let p = Payload::from_bytes(b"<html>".to_vec());
        assert!(p.typed::<Hits>().is_err());
        assert!(p.value().is_err());
    }

    #[test]
    fn the_value_is_the_typed_answers_encoding() {
        let hits = Hits {
            titles: vec!["begroting".into(), "motie".into()],
        };
        let p = Payload::encode(Hits {
            titles: hits.titles.clone(),
        })
        .expect("encodes");
        let expected = serde_json::to_value(&hits).expect("encodes");
        assert_eq!(p.value().expect("a value"), expected);
        assert_eq!(p.value().expect("the memo"), expected);
    }
}
