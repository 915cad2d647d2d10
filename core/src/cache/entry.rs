//! The stored form of one buffered answer: a checksummed header plus the payload.
//!
//! Layout (all integers little-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 4 | magic `BBUF` |
//! | 1 | entry format (1) |
//! | 1 | data class tag |
//! | 2 | version length `v` |
//! | 8 | `stored_at`, ms since the Unix epoch |
//! | 8 | `expires_at`, ms since the Unix epoch |
//! | 8 | payload length `n` |
//! | 4 | CRC-32 of every other byte of the entry |
//! | v | the BesluitBron version that wrote it |
//! | n | payload |
//!
//! Invariant: [`decode_entry`] returns a value only when the magic, format, class,
//! lengths (exactly `36 + v + n` bytes) and checksum all agree. A truncated, padded or
//! bit-flipped entry is an error, never a garbage payload.

use crate::WallTime;
use crate::cache::policy::{CacheVersion, DataClass};

const MAGIC: [u8; 4] = *b"BBUF";
const FORMAT: u8 = 1;
/// Bytes before the version string.
pub const FIXED_HEADER_BYTES: usize = 36;
const CRC_AT: usize = 32;

/// What an entry says about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryHeader {
    /// The kind of data in the payload.
    pub class: DataClass,
    /// The BesluitBron version that wrote the entry.
    pub version: CacheVersion,
    /// When it was written.
    pub stored_at: WallTime,
    /// When it stops being fresh (`stored_at + ttl_ms` of its class at write time).
    pub expires_at: WallTime,
}

/// An entry whose bytes failed validation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Shorter than the fixed header.
    #[error("entry of {len_bytes} bytes is shorter than its header")]
    TooShort {
        /// Bytes present.
        len_bytes: usize,
    },
    /// Does not start with `BBUF`.
    #[error("entry has no BBUF magic")]
    BadMagic,
    /// An entry format this build does not read.
    #[error("unknown entry format {0}")]
    UnknownFormat(u8),
    /// An unknown data class tag.
    #[error("unknown data class tag {0}")]
    UnknownClass(u8),
    /// The header's lengths do not add up to the bytes present.
    #[error("entry is {actual_bytes} bytes but its header describes {expected_bytes}")]
    LengthMismatch {
        /// What the header describes.
        expected_bytes: u64,
        /// What is there.
        actual_bytes: u64,
    },
    /// The CRC-32 does not match the contents.
    #[error("entry checksum {stored:#010x} does not match contents {computed:#010x}")]
    ChecksumMismatch {
        /// The checksum in the header.
        stored: u32,
        /// The checksum of the bytes present.
        computed: u32,
    },
    /// The version field is not a valid version.
    #[error("entry version field is invalid")]
    BadVersion,
    /// The entry's class differs from the class in the key it is stored under.
    #[error("entry holds {found} data under a {expected} key")]
    ClassMismatch {
        /// The class the key names.
        expected: DataClass,
        /// The class the entry names.
        found: DataClass,
    },
}

/// A decoded entry: its header and its payload, sharing one buffer (no payload copy).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CachedValue {
    header: EntryHeader,
    bytes: Vec<u8>,
    payload_at: usize,
}

impl CachedValue {
    /// The header.
    pub fn header(&self) -> &EntryHeader {
        &self.header
    }

    /// The payload: the platform's answer as it was stored.
    pub fn payload(&self) -> &[u8] {
        &self.bytes[self.payload_at..]
    }

    /// The payload, owned.
    pub fn into_payload(mut self) -> Vec<u8> {
        self.bytes.drain(..self.payload_at);
        self.bytes
    }
}

/// The encoded size of an entry with a `version_len`-byte version and `payload_len`-byte payload.
pub const fn encoded_len(version_len: usize, payload_len: usize) -> usize {
    FIXED_HEADER_BYTES + version_len + payload_len
}

/// Encodes an entry.
pub fn encode_entry(header: &EntryHeader, payload: &[u8]) -> Vec<u8> {
    let version = header.version.as_str().as_bytes();
    let mut out = Vec::with_capacity(encoded_len(version.len(), payload.len()));
    out.extend_from_slice(&MAGIC);
    out.push(FORMAT);
    out.push(header.class.tag());
    // CacheVersion guarantees at most 255 bytes.
    out.extend_from_slice(&(version.len() as u16).to_le_bytes());
    out.extend_from_slice(&header.stored_at.unix_millis().to_le_bytes());
    out.extend_from_slice(&header.expires_at.unix_millis().to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(version);
    out.extend_from_slice(payload);
    let crc = checksum(&out);
    out[CRC_AT..CRC_AT + 4].copy_from_slice(&crc.to_le_bytes());
    out
}

/// CRC-32 of the entry with its checksum field skipped.
fn checksum(entry: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&entry[..CRC_AT]);
    h.update(&entry[CRC_AT + 4..]);
    h.finalize()
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut raw = [0; 8];
    raw.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(raw)
}

/// Validates and decodes an entry, taking ownership of its bytes.
pub fn decode_entry(bytes: Vec<u8>) -> Result<CachedValue, DecodeError> {
    if bytes.len() < FIXED_HEADER_BYTES {
        return Err(DecodeError::TooShort { len_bytes: bytes.len() });
    }
    if bytes[..4] != MAGIC {
        return Err(DecodeError::BadMagic);
    }
    if bytes[4] != FORMAT {
        return Err(DecodeError::UnknownFormat(bytes[4]));
    }
    let class = DataClass::from_tag(bytes[5]).ok_or(DecodeError::UnknownClass(bytes[5]))?;
    let version_len = u16::from_le_bytes([bytes[6], bytes[7]]) as u64;
    let stored_at = WallTime(u64_at(&bytes, 8));
    let expires_at = WallTime(u64_at(&bytes, 16));
    let payload_len = u64_at(&bytes, 24);
    let expected_bytes = (FIXED_HEADER_BYTES as u64)
        .saturating_add(version_len)
        .saturating_add(payload_len);
    if expected_bytes != bytes.len() as u64 {
        return Err(DecodeError::LengthMismatch {
            expected_bytes,
            actual_bytes: bytes.len() as u64,
        });
    }
    let mut stored = [0; 4];
    stored.copy_from_slice(&bytes[CRC_AT..CRC_AT + 4]);
    let stored = u32::from_le_bytes(stored);
    let computed = checksum(&bytes);
    if stored != computed {
        return Err(DecodeError::ChecksumMismatch { stored, computed });
    }
    // The lengths were checked against `bytes.len()`, so these fit in usize.
    let payload_at = FIXED_HEADER_BYTES + version_len as usize;
    let version = std::str::from_utf8(&bytes[FIXED_HEADER_BYTES..payload_at]).map_err(|_| DecodeError::BadVersion)?;
    let version = CacheVersion::new(version).map_err(|_| DecodeError::BadVersion)?;
    Ok(CachedValue {
        header: EntryHeader {
            class,
            version,
            stored_at,
            expires_at,
        },
        bytes,
        payload_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use quickcheck::quickcheck;

    fn header() -> EntryHeader {
        EntryHeader {
            class: DataClass::Document,
            version: CacheVersion::new("1.5.0").unwrap(),
            stored_at: WallTime(1_000),
            expires_at: WallTime(2_000),
        }
    }

    #[test]
    fn round_trip_keeps_header_and_payload() {
        let bytes = encode_entry(&header(), b"<xml>besluit</xml>");
        assert_eq!(bytes.len(), encoded_len(5, 18));
        let value = decode_entry(bytes).unwrap();
        assert_eq!(value.header(), &header());
        assert_eq!(value.payload(), b"<xml>besluit</xml>");
        assert_eq!(value.into_payload(), b"<xml>besluit</xml>".to_vec());
    }

    #[test]
    fn every_truncation_is_refused() {
        let bytes = encode_entry(&header(), &[7; 100]);
        for n in 0..bytes.len() {
            assert!(
                decode_entry(bytes[..n].to_vec()).is_err(),
                "prefix of {n} bytes decoded"
            );
        }
    }

    #[test]
    fn padding_is_refused() {
        let mut bytes = encode_entry(&header(), b"abc");
        bytes.push(0);
        assert!(matches!(decode_entry(bytes), Err(DecodeError::LengthMismatch { .. })));
    }

    #[test]
    fn a_zeroed_tail_is_caught_by_the_checksum() {
        // What a torn write of a large value looks like: the right length, zeros at the end.
        let mut bytes = encode_entry(&header(), &[0xAB; 4096]);
        let len = bytes.len();
        bytes[len - 512..].fill(0);
        assert!(matches!(decode_entry(bytes), Err(DecodeError::ChecksumMismatch { .. })));
    }

    quickcheck! {
        fn qc_any_single_bit_flip_is_refused(payload: Vec<u8>, at: usize, bit: u8) -> bool {
            let mut bytes = encode_entry(&header(), &payload);
            let at = at % bytes.len();
            bytes[at] ^= 1 << (bit % 8);
            decode_entry(bytes).is_err()
        }
    }
}
