//! Hostile answers ([`FakeConfig::hostile`](crate::FakeConfig::hostile)): a platform that
//! tries to hurt its client with the body, the headers or the pace of its answer, the
//! same for every fake. Most are made from the answer the fake would have given, so each
//! parser meets the attack in the shape it otherwise reads: the XML attacks are put
//! into the real XML document (inside its root element), the nesting into the real
//! JSON or XML, the gzip is the real answer cut in half.
//!
//! Invariants: a hostile answer never contacts anything (a redirect names a loopback
//! address, the fake's own listener under another host name); arrivals under that other
//! host name are counted ([`FakeHandle::off_host_arrivals`](crate::FakeHandle::off_host_arrivals)),
//! so a test sees a client that followed it. Nothing here is random.
//!
//! What this module does not do: decide which requests get a hostile answer (every
//! accepted request does while the setting is on), or parse anything.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::{HeaderValue, Response, StatusCode, header};
use axum::middleware::Next;
use hyper::body::{Frame, SizeHint};

/// The host name a [`HostileBody::RedirectOffHost`] sends the client to: the fake's own
/// listener, named differently, so a client that follows it reaches loopback only.
pub const OFF_HOST: &str = "localhost";

/// Nesting depth of [`HostileBody::DeepNesting`].
pub const DEEP_NESTING: usize = 10_000;

/// The largest real answer a hostile answer is made from.
const REAL_BODY_MAX_BYTES: usize = 64 * 1024 * 1024;

/// How [`HostileBody::Drip`] paces its body: one byte per this.
const DRIP_EVERY: Duration = Duration::from_secs(1);

/// A hostile answer (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostileBody {
    /// An internal DTD whose entity expands to 10^9 `lol`s ("billion laughs"), referred
    /// to inside the root element of the real XML answer (a JSON answer becomes such a
    /// document of its own).
    BillionLaughs,
    /// An external entity naming `file:///etc/passwd`, referred to inside the root
    /// element of the real XML answer (a JSON answer becomes such a document).
    ExternalEntity,
    /// [`DEEP_NESTING`] levels of arrays (JSON) or elements (XML) inside the real answer.
    DeepNesting,
    /// The real answer under `Content-Type: application/octet-stream`.
    WrongContentType,
    /// The real answer as `Content-Encoding: gzip`, cut off in the middle of its stream.
    TruncatedGzip,
    /// `302` to the same path on [`OFF_HOST`] (another host, same loopback listener).
    RedirectOffHost,
    /// `302` to the very same address, every time.
    RedirectLoop,
    /// The real answer, announced whole in `Content-Length`, sent one byte a second.
    Drip,
    /// The real XML or JSON answer cut off right after its first complete record (an
    /// SRU `record`, an Atom `entry`, an article; a JSON object in a list) — or, with
    /// none, just before the root closes — with an honest `Content-Length`: the shape
    /// of a shorter page. Any other body (a PDF, an HTML page) is sent as it is.
    CutAfterRecord,
    /// Status 200 with an Elasticsearch error object in JSON (`{"error":{"root_cause":
    /// […]},"status":500}`), whatever was asked: a failure that says "200".
    ErrorObject,
}

impl HostileBody {
    /// Every hostile answer, in the order its names are listed where they are parsed
    /// (`impl FromStr for HostileBody`, `config.rs`).
    pub const ALL: [HostileBody; 10] = [
        HostileBody::BillionLaughs,
        HostileBody::ExternalEntity,
        HostileBody::DeepNesting,
        HostileBody::WrongContentType,
        HostileBody::TruncatedGzip,
        HostileBody::RedirectOffHost,
        HostileBody::RedirectLoop,
        HostileBody::Drip,
        HostileBody::CutAfterRecord,
        HostileBody::ErrorObject,
    ];

    /// The name `hostile=NAME` takes.
    pub fn name(self) -> &'static str {
        match self {
            HostileBody::BillionLaughs => "billion-laughs",
            HostileBody::ExternalEntity => "external-entity",
            HostileBody::DeepNesting => "deep-nesting",
            HostileBody::WrongContentType => "wrong-content-type",
            HostileBody::TruncatedGzip => "truncated-gzip",
            HostileBody::RedirectOffHost => "redirect-off-host",
            HostileBody::RedirectLoop => "redirect-loop",
            HostileBody::Drip => "drip",
            HostileBody::CutAfterRecord => "cut-after-record",
            HostileBody::ErrorObject => "error-object",
        }
    }
}

/// The hostile answer `kind` to `request`, made from what the fake would answer; an
/// arrival under [`OFF_HOST`] is counted in `off_host_arrivals`.
pub(crate) async fn answer(
    kind: HostileBody,
    off_host_arrivals: &AtomicU64,
    request: Request,
    next: Next,
) -> Response<Body> {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("")
        .to_owned();
    if host.split(':').next() == Some(OFF_HOST) {
        off_host_arrivals.fetch_add(1, Ordering::SeqCst);
    }
    let path_and_query = request.uri().path_and_query().map_or("/", |p| p.as_str()).to_owned();
    match kind {
        HostileBody::RedirectOffHost => {
            let port = host.rsplit_once(':').map_or("80", |(_, port)| port);
            return redirect(&format!("http://{OFF_HOST}:{port}{path_and_query}"));
        }
        HostileBody::RedirectLoop => return redirect(&path_and_query),
        HostileBody::ErrorObject => {
            let mut response = Response::new(Body::from(ERROR_OBJECT));
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json; charset=utf-8"),
            );
            return response;
        }
        _ => {}
    }
    let real = next.run(request).await;
    let (mut parts, body) = real.into_parts();
    let Ok(body) = axum::body::to_bytes(body, REAL_BODY_MAX_BYTES).await else {
        return Response::from_parts(parts, Body::empty());
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    let body: Vec<u8> = match kind {
        HostileBody::BillionLaughs => into_root(&body, BILLION_LAUGHS_DTD, "&lol9;"),
        HostileBody::ExternalEntity => into_root(&body, EXTERNAL_ENTITY_DTD, "&xxe;"),
        HostileBody::DeepNesting => deep(&body),
        HostileBody::WrongContentType => {
            parts.headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/octet-stream"),
            );
            body.to_vec()
        }
        HostileBody::TruncatedGzip => {
            parts
                .headers
                .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
            let gzip = gzip_stored(&body);
            gzip[..gzip.len() / 2].to_vec()
        }
        HostileBody::Drip => {
            return Response::from_parts(parts, Body::new(Drip::new(body)));
        }
        HostileBody::CutAfterRecord => cut_after_record(&body).to_vec(),
        HostileBody::RedirectOffHost | HostileBody::RedirectLoop | HostileBody::ErrorObject => {
            unreachable!("answered above")
        }
    };
    Response::from_parts(parts, Body::from(body))
}

fn redirect(location: &str) -> Response<Body> {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::FOUND;
    if let Ok(location) = HeaderValue::from_str(location) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    response
}

const BILLION_LAUGHS_DTD: &str = r#"<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
"#;

/// What an Elasticsearch behind a platform answers when a search fails on its shards.
const ERROR_OBJECT: &str = r#"{"error":{"root_cause":[{"type":"search_phase_execution_exception","reason":"all shards failed"}],"type":"search_phase_execution_exception","reason":"all shards failed","phase":"query","grouped":true,"failed_shards":[]},"status":500}"#;

/// The record end tags [`HostileBody::CutAfterRecord`] cuts after, by local name.
const RECORD_ENDS: [&str; 4] = ["record>", "entry>", "artikel>", "Stemming>"];

/// `body` (XML or JSON) cut right after its first complete record, or just before its
/// root closes; any other body unchanged.
fn cut_after_record(body: &[u8]) -> &[u8] {
    let first = body
        .iter()
        .position(|b| !b.is_ascii_whitespace() && *b != 0xEF && *b != 0xBB && *b != 0xBF);
    match first.map(|i| body[i]) {
        Some(b'<') => {
            let last_end = body.windows(2).rposition(|w| w == b"</").unwrap_or(body.len());
            let record = RECORD_ENDS
                .iter()
                .filter_map(|end| {
                    let mut from = 0;
                    // An end tag `</…record>`: the first one that closes before the root.
                    while let Some(i) = body[from..].windows(end.len()).position(|w| w == end.as_bytes()) {
                        let at = from + i;
                        let tag_start = body[..at].iter().rposition(|&b| b == b'<').unwrap_or(0);
                        if body.get(tag_start + 1) == Some(&b'/') {
                            return Some(at + end.len());
                        }
                        from = at + 1;
                    }
                    None
                })
                .min()
                .filter(|&cut| cut < last_end);
            &body[..record.unwrap_or(last_end)]
        }
        Some(b'{') | Some(b'[') => match body.windows(2).position(|w| w == b"},") {
            Some(i) => &body[..=i],
            None => {
                let end = body.iter().rposition(|b| !b.is_ascii_whitespace()).unwrap_or(0);
                &body[..end]
            }
        },
        _ => body,
    }
}

const EXTERNAL_ENTITY_DTD: &str = "<!DOCTYPE root [\n <!ENTITY xxe SYSTEM \"file:///etc/passwd\">\n]>\n";

/// Whether `body` looks like an XML document (after any whitespace and byte-order mark).
fn is_xml(body: &[u8]) -> bool {
    let body = body.strip_prefix("\u{feff}".as_bytes()).unwrap_or(body);
    body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'<')
}

/// The real XML `body` with `dtd` before its root element and `reference` as the first
/// thing inside it; a body that is not XML becomes `dtd` and a root holding `reference`.
fn into_root(body: &[u8], dtd: &str, reference: &str) -> Vec<u8> {
    let Some(root_end) = is_xml(body).then(|| root_start_tag_end(body)).flatten() else {
        return format!("<?xml version=\"1.0\"?>\n{dtd}<root>{reference}</root>\n").into_bytes();
    };
    let root_start = body[..root_end].iter().rposition(|&b| b == b'<').unwrap_or(0);
    let mut out = Vec::with_capacity(body.len() + dtd.len() + reference.len());
    out.extend_from_slice(&body[..root_start]);
    out.extend_from_slice(dtd.as_bytes());
    out.extend_from_slice(&body[root_start..=root_end]);
    out.extend_from_slice(reference.as_bytes());
    out.extend_from_slice(&body[root_end + 1..]);
    out
}

/// The index of the `>` that ends the root element's start tag: the first tag that is
/// not a declaration (`<?`), a comment or a doctype (`<!`). `None` for a self-closing
/// root or no root at all.
fn root_start_tag_end(body: &[u8]) -> Option<usize> {
    let mut at = 0;
    loop {
        let open = at + body[at..].iter().position(|&b| b == b'<')?;
        let close = open + body[open..].iter().position(|&b| b == b'>')?;
        match body.get(open + 1) {
            Some(b'?') | Some(b'!') => at = close + 1,
            _ => return (body[close - 1] != b'/').then_some(close),
        }
    }
}

/// The real `body` with [`DEEP_NESTING`] levels inside it: a `"deep"` member of nested
/// arrays in a JSON object, nested elements inside an XML root; anything else becomes
/// nested JSON arrays alone.
fn deep(body: &[u8]) -> Vec<u8> {
    let nested = |open: &str, close: &str| {
        let mut s = String::with_capacity(DEEP_NESTING * (open.len() + close.len()));
        s.push_str(&open.repeat(DEEP_NESTING));
        s.push_str(&close.repeat(DEEP_NESTING));
        s
    };
    let first = body.iter().position(|b| !b.is_ascii_whitespace());
    match first.map(|i| (i, body[i])) {
        Some((i, b'{')) => {
            let mut out = body[..=i].to_vec();
            out.extend_from_slice(b"\"deep\":");
            out.extend_from_slice(nested("[", "]").as_bytes());
            let rest = &body[i + 1..];
            if rest.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'}') {
                out.push(b',');
            }
            out.extend_from_slice(rest);
            out
        }
        Some((_, b'<')) => match root_start_tag_end(body) {
            Some(end) => {
                let mut out = body[..=end].to_vec();
                out.extend_from_slice(nested("<deep>", "</deep>").as_bytes());
                out.extend_from_slice(&body[end + 1..]);
                out
            }
            None => nested("<deep>", "</deep>").into_bytes(),
        },
        _ => nested("[", "]").into_bytes(),
    }
}

/// `data` as a gzip member of stored (uncompressed) deflate blocks, with its trailer.
fn gzip_stored(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    let mut chunks = data.chunks(u16::MAX as usize).peekable();
    if chunks.peek().is_none() {
        out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    while let Some(chunk) = chunks.next() {
        let last = chunks.peek().is_none();
        let len = chunk.len() as u16;
        out.push(u8::from(last));
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(chunk);
    }
    // The trailer's CRC is never checked by a reader that finds the stream cut off.
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

/// A body sent one byte per [`DRIP_EVERY`], its whole length announced up front.
struct Drip {
    body: Bytes,
    sent: usize,
    wait: Pin<Box<tokio::time::Sleep>>,
}

impl Drip {
    fn new(body: Bytes) -> Drip {
        Drip {
            body,
            sent: 0,
            wait: Box::pin(tokio::time::sleep(DRIP_EVERY)),
        }
    }
}

impl HttpBody for Drip {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.sent == self.body.len() {
            return Poll::Ready(None);
        }
        if self.sent > 0 {
            if self.wait.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            let next = tokio::time::Instant::now() + DRIP_EVERY;
            self.wait.as_mut().reset(next);
        }
        let at = self.sent;
        self.sent += 1;
        Poll::Ready(Some(Ok(Frame::data(self.body.slice(at..at + 1)))))
    }

    fn is_end_stream(&self) -> bool {
        self.sent == self.body.len()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact((self.body.len() - self.sent) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        for h in HostileBody::ALL {
            assert_eq!(h.name().parse::<HostileBody>(), Ok(h));
        }
        assert!(
            "nope"
                .parse::<HostileBody>()
                .unwrap_err()
                .to_string()
                .contains("billion-laughs")
        );
    }

    #[test]
    fn attacks_go_inside_the_real_root_element() {
        let xml = b"<?xml version=\"1.0\"?>\n<!-- c --><feed xmlns=\"a\"><entry/></feed>";
        let out = String::from_utf8(into_root(xml, "<!DOCTYPE x []>\n", "&x;")).unwrap();
        assert_eq!(
            out,
            "<?xml version=\"1.0\"?>\n<!-- c --><!DOCTYPE x []>\n<feed xmlns=\"a\">&x;<entry/></feed>"
        );
        let json = String::from_utf8(into_root(b"{\"a\":1}", "<!DOCTYPE x []>\n", "&x;")).unwrap();
        assert!(json.ends_with("<root>&x;</root>\n"), "{json}");
    }

    #[test]
    fn deep_nesting_keeps_the_real_answer_around_it() {
        let json = String::from_utf8(deep(b"{\"a\":1}")).unwrap();
        assert!(json.starts_with("{\"deep\":[[[") && json.ends_with("]]],\"a\":1}"));
        assert_eq!(json.matches('[').count(), DEEP_NESTING);
        let empty = String::from_utf8(deep(b"{}")).unwrap();
        assert!(empty.ends_with("]]]}"), "no trailing comma");
        let xml = String::from_utf8(deep(b"<r a=\"1\"><x/></r>")).unwrap();
        assert!(xml.starts_with("<r a=\"1\"><deep><deep>") && xml.ends_with("</deep></deep><x/></r>"));
    }

    #[test]
    fn a_cut_falls_right_after_the_first_complete_record() {
        let sru = b"<r><records><record>1</record><record>2</record></records><n>3</n></r>";
        assert_eq!(cut_after_record(sru), b"<r><records><record>1</record>");
        let ns = b"\xEF\xBB\xBF<sru:r><sru:record>1</sru:record></sru:r>";
        assert_eq!(cut_after_record(ns), b"\xEF\xBB\xBF<sru:r><sru:record>1</sru:record>");
        assert_eq!(cut_after_record(b"<a><b>x</b></a>\n"), b"<a><b>x</b>");
        assert_eq!(
            cut_after_record(br#"{"value":[{"a":1},{"a":2}]}"#),
            br#"{"value":[{"a":1}"#
        );
        assert_eq!(cut_after_record(br#"{"a":1}"#), br#"{"a":1"#);
        assert_eq!(cut_after_record(b"%PDF-1.7"), b"%PDF-1.7");
    }

    #[test]
    fn the_gzip_member_is_well_formed_before_it_is_cut() {
        let data = vec![b'a'; 70_000];
        let gz = gzip_stored(&data);
        assert_eq!(&gz[..3], &[0x1f, 0x8b, 8]);
        // Two stored blocks: the first not final, the second final.
        assert_eq!(gz[10], 0);
        assert_eq!(gz[10 + 5 + 65_535], 1);
        assert_eq!(gz.len(), 10 + 5 + 65_535 + 5 + (70_000 - 65_535) + 8);
    }
}
