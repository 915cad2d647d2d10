//! Tool sets a client chooses: besides what an address lists by default, the whole tool
//! set of each platform named in the request — the query parameter `toolsets`
//! (`/mcp?toolsets=tk,obv`, for clients that take only an address) or the header
//! `X-MCP-Toolsets: tk,obv` (for clients that send headers), as other large MCP servers
//! let clients choose. `all` names every platform's set.
//!
//! A tool outside the list still answers by name; the choice only decides what a model
//! is shown.
//!
//! What this module does not do: keep a choice between requests (a client sends it with
//! each request, as its address or headers are), or serve a tool not in the registry.

use axum::http::request::Parts;

/// The query parameter naming tool sets.
pub const PARAMETER: &str = "toolsets";

/// The header naming tool sets.
pub const HEADER: &str = "x-mcp-toolsets";

/// The name of every platform's set at once.
pub const ALL: &str = "all";

/// The most sets one request names (there are fewer platforms).
const MAX_SETS: usize = 64;

/// The platforms whose whole tool sets `parts` asks for: `None` when it names none, or
/// why its names cannot be served (`served` are the platforms' ids). The query parameter
/// and the header add up.
pub fn chosen(parts: Option<&Parts>, served: &[&'static str]) -> Option<Result<Vec<&'static str>, String>> {
    let parts = parts?;
    let mut named: Vec<String> = Vec::new();
    let query = parts.uri.query().unwrap_or("");
    if !query.is_empty()
        && let Ok(url) = reqwest::Url::parse(&format!("http://besluitbron/?{query}"))
    {
        for (key, value) in url.query_pairs() {
            if key == PARAMETER {
                named.extend(value.split(',').map(|s| s.trim().to_owned()));
            }
        }
    }
    for value in parts.headers.get_all(HEADER) {
        let Ok(value) = value.to_str() else {
            return Some(Err(format!("the header {HEADER} is not text")));
        };
        named.extend(value.split(',').map(|s| s.trim().to_owned()));
    }
    named.retain(|n| !n.is_empty());
    if named.is_empty() {
        return None;
    }
    if named.len() > MAX_SETS {
        return Some(Err(format!("{} tool sets named; at most {MAX_SETS}", named.len())));
    }
    let mut sets: Vec<&'static str> = Vec::new();
    for name in &named {
        if name.eq_ignore_ascii_case(ALL) {
            return Some(Ok(served.to_vec()));
        }
        match served.iter().find(|id| id.eq_ignore_ascii_case(name)) {
            Some(id) if !sets.contains(id) => sets.push(id),
            Some(_) => {}
            None => {
                return Some(Err(format!(
                    "no tool set `{}`; the sets are {}, and `{ALL}`",
                    name.chars().take(40).collect::<String>(),
                    served.join(", ")
                )));
            }
        }
    }
    Some(Ok(sets))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(uri: &str, header: Option<&str>) -> Parts {
        let mut request = axum::http::Request::builder().uri(uri);
        if let Some(h) = header {
            request = request.header(HEADER, h);
        }
        request.body(()).expect("a request").into_parts().0
    }

    const SERVED: &[&str] = &["obv", "tk", "cvdr"];

    #[test]
    fn the_parameter_and_the_header_name_sets_and_add_up() {
        assert_eq!(chosen(Some(&parts("/mcp", None)), SERVED), None);
        assert_eq!(chosen(None, SERVED), None);
        assert_eq!(chosen(Some(&parts("/mcp?toolsets=", None)), SERVED), None);
        assert_eq!(
            chosen(Some(&parts("/mcp?toolsets=tk,%20OBV", Some("cvdr, tk"))), SERVED),
            Some(Ok(vec!["tk", "obv", "cvdr"]))
        );
        assert_eq!(
            chosen(Some(&parts("/mcp?toolsets=all", None)), SERVED),
            Some(Ok(SERVED.to_vec()))
        );
    }

    #[test]
    fn an_unknown_set_is_refused_naming_the_sets_there_are() {
        let refused = chosen(Some(&parts("/mcp?toolsets=tk,eurlex", None)), SERVED);
        let Some(Err(message)) = refused else {
            panic!("refused: {refused:?}");
        };
        assert!(
            message.contains("`eurlex`") && message.contains("obv, tk, cvdr"),
            "{message}"
        );
        let many = format!("/mcp?toolsets={}", vec!["tk"; 65].join(","));
        assert!(matches!(chosen(Some(&parts(&many, None)), SERVED), Some(Err(_))));
    }
}
