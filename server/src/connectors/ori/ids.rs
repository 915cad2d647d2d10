//! The ids Open Raadsinformatie reads (`fetch`, where a mirror is configured): a search
//! result's `index/id` (`ori_heemskerk_20250506181303/1001`).

/// The document `id` names as `index/id`, trimmed, if it is one: an index of ORI's,
/// OSI's or OWI's, then a document id of letters and digits.
pub fn document_id(id: &str) -> Option<&str> {
    let id = id.trim();
    let (index, doc) = id.split_once('/')?;
    let index_ok = ["ori_", "osi_", "owi_"].iter().any(|p| index.starts_with(p))
        && index
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'));
    if !index_ok || doc.is_empty() || !doc.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    Some(id)
}
