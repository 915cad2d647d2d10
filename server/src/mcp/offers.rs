//! What a connector offers besides its tools — resources, resource templates, prompts and
//! the completion of their arguments, declared in the connector's own module
//! ([`crate::connectors::offers`]) — served here for every address.
//!
//! **A resource is read through its tool.** Every resource and resource template names
//! the tool that answers it; `resources/read` calls that tool through the one entry point
//! for tools ([`super::Calls::call`]: argument checks, replay, time limit), so a read has the
//! tool's buffer key, fair queue, coalescing, limits and metrics — there is no second
//! fetch path. A tool error becomes an MCP error with the tool's message (it names the
//! platform); nothing is kept for it. A reference list is read as the tool's structured
//! content (`application/json`), a document as the tool's text (`text/plain`: the first
//! page, which says how to read on with the tool's `offset`).
//!
//! **A completion reads its list through the same path.** A completion source either
//! lists fixed values or fetches its reference list with the very `PlatformCall` its
//! tool uses (the same buffer key), asked as the caller: the list is fetched once per
//! its buffer lifetime, whoever asks first (a tool or a completion), and concurrent
//! askers share one flight.
//!
//! What this module does not do: decide what a tool asks (the connectors do) or how a
//! call goes (the platform path does).

use std::sync::Arc;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CompleteRequestParams, CompleteResult, CompletionInfo, GetPromptRequestParams,
    GetPromptResult, JsonObject, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, Prompt,
    PromptArgument, PromptMessage, ReadResourceRequestParams, ReadResourceResult, Reference, Resource,
    ResourceContents, ResourceTemplate, Role,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;

use super::listing::GUIDE_URI;
use super::{Handler, LIST_TTL_MS};
use crate::call::Call;
use crate::connectors::offers::{Choice, Offers, PromptArgs, PromptOffer, Shape, Values, resolve_choice};
use crate::platforms::http::brief;

/// How long a client may keep a resource it read: platform data that BesluitBron itself
/// keeps for days to weeks; an hour keeps a client from holding a corrected record long.
pub const READ_TTL_MS: u64 = 3_600_000;

/// The most completion values in one answer (the protocol's bound).
pub const MAX_COMPLETIONS: usize = CompletionInfo::MAX_VALUES;

/// Longest resource URI accepted, in characters.
pub const MAX_URI_CHARS: usize = 300;

/// Longest prompt argument or completion value accepted, in characters.
pub const MAX_VALUE_CHARS: usize = 200;

/// The choices matching what was typed, best first: values starting with it, then
/// values containing it, then labels containing it (case-insensitive); the list's
/// order within each. At most [`MAX_COMPLETIONS`], with the total and whether there
/// are more.
pub fn complete_choices(choices: &[Choice], typed: &str) -> CompletionInfo {
    let typed = typed.trim().to_lowercase();
    let mut ranked: Vec<(u8, usize, &str)> = choices
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let value = c.value.to_lowercase();
            let rank = if value.starts_with(&typed) {
                0
            } else if value.contains(&typed) {
                1
            } else if c.label.to_lowercase().contains(&typed) {
                2
            } else {
                return None;
            };
            Some((rank, i, c.value.as_str()))
        })
        .collect();
    ranked.sort_unstable();
    let mut values: Vec<String> = Vec::new();
    for (_, _, v) in &ranked {
        if !values.iter().any(|seen| seen == v) {
            values.push((*v).to_owned());
        }
    }
    let total = values.len();
    values.truncate(MAX_COMPLETIONS);
    CompletionInfo::with_pagination(
        values,
        Some(u32::try_from(total).unwrap_or(u32::MAX)),
        total > MAX_COMPLETIONS,
    )
    .unwrap_or_default()
}

fn invalid(message: impl Into<String>) -> ErrorData {
    ErrorData::invalid_params(message.into(), None)
}

impl Handler {
    fn offers(&self) -> impl Iterator<Item = &'static Offers> {
        self.scope()
            .connectors(self.calls().registry())
            .into_iter()
            .map(|c| c.offers)
    }

    /// Whether this address offers resources, prompts and completions.
    pub(crate) fn offered(&self) -> (bool, bool, bool) {
        // The guide is a resource everywhere.
        let (mut resources, mut prompts, mut completions) = (true, false, false);
        for o in self.offers() {
            resources |= !o.resources.is_empty() || !o.templates.is_empty();
            prompts |= !o.prompts.is_empty();
            completions |= o.templates.iter().any(|t| t.values.is_some())
                || o.prompts.iter().any(|p| p.arguments.iter().any(|a| a.values.is_some()));
        }
        (resources, prompts, completions)
    }

    /// The guide of this address's connectors, as markdown.
    pub(crate) fn guide(&self) -> String {
        let mut out = String::from("# BesluitBron: per-platform advice\n");
        for c in self.scope().connectors(self.calls().registry()) {
            out.push_str(&format!(
                "\n## {} (`{}`)\n\n{}\n",
                c.platform.display_name(),
                c.id,
                c.guide
            ));
        }
        out
    }

    pub(crate) fn resource_list(&self) -> ListResourcesResult {
        let guide = Resource::new(GUIDE_URI, "guide")
            .with_title("How to use each platform")
            .with_description(
                "Per-platform advice for an assistant: costs, what to ask first, what a platform cannot do (the \
                 server's instructions are kept short)",
            )
            .with_mime_type("text/markdown");
        let resources = std::iter::once(guide)
            .chain(self.offers().flat_map(|o| o.resources).map(|r| {
                Resource::new(r.uri, r.name)
                    .with_title(r.title)
                    .with_description(r.description)
                    .with_mime_type(mime(r.shape))
            }))
            .chain(super::views::resources(
                &self.tools.iter().map(|t| &*t.name).collect::<Vec<_>>(),
            ))
            .collect();
        ListResourcesResult::with_all_items(resources)
            .with_ttl_ms(LIST_TTL_MS)
            .with_cache_scope(CacheScope::Public)
    }

    pub(crate) fn template_list(&self) -> ListResourceTemplatesResult {
        let templates = self
            .offers()
            .flat_map(|o| o.templates)
            .map(|t| {
                ResourceTemplate::new(t.uri_template, t.name)
                    .with_title(t.title)
                    .with_description(t.description)
                    .with_mime_type(mime(t.shape))
            })
            .collect();
        ListResourceTemplatesResult::with_all_items(templates)
            .with_ttl_ms(LIST_TTL_MS)
            .with_cache_scope(CacheScope::Public)
    }

    pub(crate) fn prompt_list(&self) -> ListPromptsResult {
        let prompts = self
            .offers()
            .flat_map(|o| o.prompts)
            .map(|p| {
                let arguments = p
                    .arguments
                    .iter()
                    .map(|a| {
                        PromptArgument::new(a.name)
                            .with_description(a.description)
                            .with_required(a.required)
                    })
                    .collect();
                Prompt::new(p.name, Some(p.description), Some(arguments)).with_title(p.title)
            })
            .collect();
        ListPromptsResult::with_all_items(prompts)
            .with_ttl_ms(LIST_TTL_MS)
            .with_cache_scope(CacheScope::Public)
    }

    fn prompt(&self, name: &str) -> Option<&'static PromptOffer> {
        self.offers().flat_map(|o| o.prompts).find(|p| p.name == name)
    }

    /// `prompts/get`: the plan for the arguments given; an unknown prompt, an unknown or
    /// over-long argument or a missing required one is invalid params. An argument that
    /// takes a reference-list value (`gemeente-utrecht`) may be given by name (`Gemeente
    /// Utrecht`): it is read against the list as the prompt's plan needs it, and a name
    /// that fits several or none is invalid params listing the candidates.
    pub(crate) async fn prompt_get(
        &self,
        request: &GetPromptRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<GetPromptResult, ErrorData> {
        let prompt = self
            .prompt(&request.name)
            .ok_or_else(|| invalid(format!("no prompt `{}`; prompts/list names them", brief(&request.name))))?;
        let mut args = PromptArgs::default();
        for (name, value) in request.arguments.iter().flatten() {
            let arg = prompt.arguments.iter().find(|a| a.name == name).ok_or_else(|| {
                invalid(format!(
                    "prompt `{}` has no argument `{}`; it takes {}",
                    prompt.name,
                    brief(name),
                    names(prompt)
                ))
            })?;
            let text = match value {
                Value::String(s) => s.trim().to_owned(),
                Value::Null => continue,
                _ => return Err(invalid(format!("argument `{}` is a string", arg.name))),
            };
            if text.chars().count() > MAX_VALUE_CHARS {
                return Err(invalid(format!(
                    "argument `{}` is longer than {MAX_VALUE_CHARS} characters",
                    arg.name
                )));
            }
            args.0.insert(arg.name, text);
        }
        if let Some(missing) = prompt
            .arguments
            .iter()
            .find(|a| a.required && args.get(a.name).is_none())
        {
            return Err(invalid(format!(
                "prompt `{}` needs the argument `{}` ({})",
                prompt.name, missing.name, missing.description
            )));
        }
        for arg in prompt.arguments {
            let (Some(values), Some(given)) = (arg.values, args.get(arg.name).map(str::to_owned)) else {
                continue;
            };
            let choices = self.choices(Some(values), context).await?;
            match resolve_choice(&choices, &given) {
                Ok(value) => {
                    args.0.insert(arg.name, value);
                }
                Err(candidates) => {
                    let listed: Vec<String> = candidates
                        .iter()
                        .map(|c| format!("`{}` ({})", c.value, c.label))
                        .collect();
                    return Err(invalid(format!(
                        "argument `{}`: `{}` is not one value of its list; give one of these (or complete it with \
                         completion/complete): {}",
                        arg.name,
                        brief(&given),
                        listed.join(", ")
                    )));
                }
            }
        }
        let text = (prompt.plan)(&args);
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]).with_description(prompt.description))
    }

    /// `resources/read`: the resource's tool, called as a `tools/call` of this request.
    pub(crate) async fn resource_read(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResult, ErrorData> {
        let uri = request.uri;
        if uri.chars().count() > MAX_URI_CHARS {
            return Err(invalid(format!("a resource URI is at most {MAX_URI_CHARS} characters")));
        }
        if let Some(view) = super::views::read(&uri) {
            return Ok(view);
        }
        if uri == GUIDE_URI {
            let contents = ResourceContents::text(self.guide(), uri.clone()).with_mime_type("text/markdown");
            return Ok(ReadResourceResult::new(vec![contents])
                .with_ttl_ms(READ_TTL_MS)
                .with_cache_scope(CacheScope::Public));
        }
        let (tool, arguments, shape) = self.resolve(&uri)?;
        let notifier = super::progress::Notifier::of(&context);
        let request = self.request(
            CallToolRequestParams::new(tool).with_arguments(arguments),
            &context,
            notifier.as_ref(),
        );
        let result = self.calls().call(request).await;
        super::progress::flush(notifier).await;
        let result = result?;
        let text = result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
            .collect::<Vec<_>>()
            .join("\n");
        if result.is_error == Some(true) {
            // The tool's message names the platform and what to do; it is bounded.
            return Err(ErrorData::internal_error(
                crate::platforms::http::bounded_text(&text),
                None,
            ));
        }
        let contents = match shape {
            Shape::Text => ResourceContents::text(text, uri.clone()),
            Shape::Json => {
                let structured = result.structured_content.unwrap_or(Value::Null);
                ResourceContents::text(structured.to_string(), uri.clone())
            }
        }
        .with_mime_type(mime(shape));
        Ok(ReadResourceResult::new(vec![contents])
            .with_ttl_ms(READ_TTL_MS)
            .with_cache_scope(CacheScope::Public))
    }

    /// The tool, its arguments and the shape of the resource at `uri`.
    fn resolve(&self, uri: &str) -> Result<(&'static str, JsonObject, Shape), ErrorData> {
        for o in self.offers() {
            if let Some(r) = o.resources.iter().find(|r| r.uri == uri) {
                let arguments = serde_json::from_str(r.arguments)
                    .map_err(|e| ErrorData::internal_error(format!("resource arguments: {e}"), None))?;
                return Ok((r.tool, arguments, r.shape));
            }
            for t in o.templates {
                if let Some(value) = t.matches(uri) {
                    let value = value.map_err(invalid)?;
                    let mut arguments = JsonObject::new();
                    arguments.insert(t.variable().to_owned(), Value::String(value));
                    return Ok((t.tool, arguments, t.shape));
                }
            }
        }
        Err(ErrorData::resource_not_found(
            format!(
                "BesluitBron has no resource `{}` here; resources/list and resources/templates/list name them",
                brief(uri)
            ),
            None,
        ))
    }

    /// The values of a prompt argument or template variable that takes a reference
    /// list (fetched as the caller of `context`, through the list tool's own call).
    async fn choices(
        &self,
        values: Option<Values>,
        context: &RequestContext<RoleServer>,
    ) -> Result<Vec<Choice>, ErrorData> {
        let choices = match values {
            None => Vec::new(),
            Some(Values::Fixed(list)) => list(),
            Some(Values::Fetched { tool, fetch }) => {
                // A platform call: the shutdown drain waits for it, as for a tool call.
                let calls = self.calls();
                let _running = calls.running_guard();
                let platform = calls
                    .tools()
                    .get(tool)
                    .and_then(|t| t.platform)
                    .ok_or_else(|| ErrorData::internal_error(format!("no tool {tool} to complete from"), None))?;
                let notifier = super::progress::Notifier::of(context);
                let call = Call {
                    tool,
                    platform: Some(platform),
                    caller: super::caller_of(context, &calls.trusted_proxies),
                    form: Arc::from(tool),
                    progress: notifier.as_ref().map(super::progress::Notifier::progress),
                    ct: context.ct.clone(),
                    // A completion renders nothing: no render cache.
                    render_cache: None,
                };
                let limit = calls.request_timeout();
                let fetched = super::ground::in_time(limit, fetch(&calls.ctx, &call)).await;
                super::progress::flush(notifier).await;
                match fetched {
                    Some(Ok(choices)) => choices,
                    Some(Err(e)) => {
                        return Err(ErrorData::internal_error(
                            crate::platforms::http::bounded_text(&e.to_string()),
                            None,
                        ));
                    }
                    None => {
                        return Err(ErrorData::internal_error(
                            format!(
                                "BesluitBron gave up after {} s waiting for the list to complete from; try again \
                                 later",
                                limit.as_secs()
                            ),
                            None,
                        ));
                    }
                }
            }
        };
        Ok(choices)
    }

    /// `completion/complete`: the values of a prompt argument or template variable that
    /// takes a reference-list value, matching what was typed.
    pub(crate) async fn completion(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let typed = &request.argument.value;
        if typed.chars().count() > MAX_VALUE_CHARS {
            return Err(invalid(format!(
                "a value to complete is at most {MAX_VALUE_CHARS} characters"
            )));
        }
        let name = request.argument.name.as_str();
        let values = match &request.r#ref {
            Reference::Prompt(p) => {
                let prompt = self
                    .prompt(&p.name)
                    .ok_or_else(|| invalid(format!("no prompt `{}`; prompts/list names them", brief(&p.name))))?;
                let arg =
                    prompt.arguments.iter().find(|a| a.name == name).ok_or_else(|| {
                        invalid(format!("prompt `{}` has no argument `{}`", prompt.name, brief(name)))
                    })?;
                arg.values
            }
            Reference::Resource(r) => {
                let template = self
                    .offers()
                    .flat_map(|o| o.templates)
                    .find(|t| t.uri_template == r.uri)
                    .ok_or_else(|| {
                        invalid(format!(
                            "no resource template `{}`; resources/templates/list names them",
                            brief(&r.uri)
                        ))
                    })?;
                if template.variable() != name {
                    return Err(invalid(format!(
                        "{} has no variable `{}`",
                        template.uri_template,
                        brief(name)
                    )));
                }
                template.values
            }
            _ => return Err(invalid("completion is offered for prompts and resource templates")),
        };
        let choices = self.choices(values, &context).await?;
        Ok(CompleteResult::new(complete_choices(&choices, typed)))
    }
}

fn names(prompt: &PromptOffer) -> String {
    let names: Vec<String> = prompt.arguments.iter().map(|a| format!("`{}`", a.name)).collect();
    names.join(", ")
}

fn mime(shape: Shape) -> &'static str {
    match shape {
        Shape::Json => "application/json",
        Shape::Text => "text/plain",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choices(values: &[(&str, &str)]) -> Vec<Choice> {
        values
            .iter()
            .map(|(v, l)| Choice {
                value: (*v).to_owned(),
                label: (*l).to_owned(),
            })
            .collect()
    }

    #[test]
    fn prefixes_first_then_containment_then_labels() {
        let list = choices(&[
            ("provincie-utrecht", "Provincie Utrecht"),
            ("gemeente-soest", "Gemeente Soest"),
            ("utrechtse-heuvelrug", "Gemeente Utrechtse Heuvelrug"),
            ("gemeente-utrecht", "Gemeente Utrecht"),
            ("ws-hdsr", "Hoogheemraadschap De Stichtse Rijnlanden (Utrecht)"),
        ]);
        let info = complete_choices(&list, "UTR");
        assert_eq!(
            info.values,
            [
                "utrechtse-heuvelrug",
                "provincie-utrecht",
                "gemeente-utrecht",
                "ws-hdsr"
            ]
        );
        assert_eq!(info.total, Some(4));
        assert_eq!(info.has_more, Some(false));
        assert!(complete_choices(&list, "zzz").values.is_empty());
        assert_eq!(complete_choices(&list, "").total, Some(5));
    }

    #[test]
    fn at_most_a_hundred_with_the_total() {
        let list: Vec<Choice> = (0..250)
            .map(|i| Choice {
                value: format!("v{i:03}"),
                label: String::new(),
            })
            .collect();
        let info = complete_choices(&list, "v");
        assert_eq!(info.values.len(), MAX_COMPLETIONS);
        assert_eq!(info.total, Some(250));
        assert_eq!(info.has_more, Some(true));
        // Duplicate values are offered once.
        let twice = choices(&[("a", "x"), ("a", "y")]);
        assert_eq!(complete_choices(&twice, "a").values, ["a"]);
    }

    /// The reference model: every distinct value whose value or label contains what was
    /// typed, case-insensitively, in the order prefix / containment / label.
    fn model(list: &[Choice], typed: &str) -> Vec<String> {
        let typed = typed.trim().to_lowercase();
        let mut out: Vec<String> = Vec::new();
        for rank in 0..3 {
            for c in list {
                let v = c.value.to_lowercase();
                let hit = match rank {
                    0 => v.starts_with(&typed),
                    1 => !v.starts_with(&typed) && v.contains(&typed),
                    _ => !v.contains(&typed) && c.label.to_lowercase().contains(&typed),
                };
                if hit && !out.contains(&c.value) {
                    out.push(c.value.clone());
                }
            }
        }
        out
    }

    quickcheck::quickcheck! {
        fn completion_is_the_models_first_hundred(pairs: Vec<(String, String)>, typed: String) -> bool {
            // Short strings over a small alphabet, so matches happen.
            let squash = |s: &str| s.chars().filter_map(|c| "abAB-".chars().nth(c as usize % 5)).take(4).collect::<String>();
            let list: Vec<Choice> = pairs
                .iter()
                .map(|(v, l)| Choice { value: squash(v), label: squash(l) })
                .collect();
            let typed = squash(&typed);
            let expected = model(&list, &typed);
            let info = complete_choices(&list, &typed);
            let first: Vec<String> = expected.iter().take(MAX_COMPLETIONS).cloned().collect();
            info.values == first
                && info.total == Some(u32::try_from(expected.len()).unwrap())
                && info.has_more == Some(expected.len() > MAX_COMPLETIONS)
        }
    }
}
