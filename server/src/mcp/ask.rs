//! Asking back: a tool call whose argument names several things (an `organization`
//! that fits several municipalities, provinces and water boards) is put to the person
//! as a choice, where the client can put it, before anything else happens.
//!
//! Who is asked:
//! - a 2026-07-28 request that declares form elicitation in its own capabilities gets
//!   `input_required` with one elicitation whose schema offers the choices (`oneOf` of
//!   `const`, the value, and `title`, the label a person reads); its retry carries the
//!   answer in `inputResponses` under [`INPUT_KEY`];
//! - a session-era client that declared form elicitation at `initialize` gets an
//!   `elicitation/create` request on the call's own stream, and the call goes on with
//!   the answer;
//! - every other client gets today's answer (the tool's own candidates), unchanged.
//!
//! Invariants: the choices come from lists BesluitBron holds, read from the arguments
//! alone — no platform is asked before the choice is made, and a retry needs no state
//! from the round that asked: any replica re-resolves the choices from the arguments and
//! takes an answer only when it is one of them (no `requestState` is sent, so none is
//! trusted). An `input_required` answer is made here, above the call stack: it never
//! enters the replay table or the render cache. A declined or cancelled choice, or a
//! session client that does not answer, gets today's answer.
//!
//! What this module does not do: resolve names (each connector's list does), or run the
//! call (the handler hands the arguments, with the choice made, to the call stack).

use std::collections::BTreeMap;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability, InputRequest,
    InputRequiredResult, JsonObject,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Value, json};

use crate::connectors::cvdr::orgs;

/// The key of BesluitBron's one elicitation in `inputRequests` and `inputResponses`.
pub const INPUT_KEY: &str = "choice";

/// One choice an argument leaves open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The tool called.
    pub tool: String,
    /// The argument that names several things.
    pub argument: &'static str,
    /// What the caller wrote.
    pub asked: String,
    /// What it may stand for, best first: never empty.
    pub options: Vec<Offered>,
}

/// One thing an argument may stand for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offered {
    /// The argument's value that names it alone (a key).
    pub value: String,
    /// What a person reads.
    pub title: String,
}

/// The choice a call of `tool` with `arguments` leaves open, found in lists BesluitBron
/// holds (no platform is asked); `None` when the arguments name one thing each.
pub fn open(tool: &str, arguments: Option<&JsonObject>) -> Option<Choice> {
    let text = |name: &str| {
        arguments
            .and_then(|a| a.get(name))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    match tool {
        "cvdr_search" => {
            let asked = text("organization")?;
            let orgs::Resolved::Ambiguous(fits) = orgs::resolve(asked) else {
                return None;
            };
            let options: Vec<Offered> = fits
                .into_iter()
                .map(|o| Offered {
                    title: o.label,
                    value: o.key,
                })
                .collect();
            (options.len() > 1).then(|| Choice {
                tool: tool.to_owned(),
                argument: "organization",
                asked: asked.to_owned(),
                options,
            })
        }
        _ => None,
    }
}

impl Choice {
    /// What the person is asked.
    pub fn message(&self) -> String {
        format!(
            "`{}` fits {} organisations. Which one is meant?",
            crate::platforms::http::brief(&self.asked),
            self.options.len()
        )
    }

    /// The elicitation's schema: one required string, one of the values, each titled.
    pub fn schema(&self) -> Value {
        let one_of: Vec<Value> = self
            .options
            .iter()
            .map(|o| json!({"const": o.value, "title": o.title}))
            .collect();
        json!({
            "type": "object",
            "properties": {
                self.argument: {
                    "type": "string",
                    "title": self.argument,
                    "description": format!("The one `{}` meant by `{}`", self.argument, self.asked),
                    "oneOf": one_of,
                }
            },
            "required": [self.argument],
        })
    }

    /// The form elicitation that asks it.
    pub fn elicitation(&self) -> ElicitRequestParams {
        let params = json!({"mode": "form", "message": self.message(), "requestedSchema": self.schema()});
        // The schema is built above of strings only, the shape rmcp's type reads.
        serde_json::from_value(params).expect("a form elicitation of string choices")
    }

    /// The 2026-07-28 answer that asks it.
    pub fn input_required(&self) -> InputRequiredResult {
        let request = json!({"method": "elicitation/create", "params": self.elicitation()});
        // Built above from rmcp's own params type.
        let request: InputRequest = serde_json::from_value(request).expect("an elicitation request");
        InputRequiredResult::from_input_requests(BTreeMap::from([(INPUT_KEY.to_owned(), request)]))
    }

    /// The value a person chose, from their answer to the elicitation: `Ok(None)` when
    /// they declined or cancelled; an error when the answer is none of the options.
    pub fn chosen(&self, answer: &Value) -> Result<Option<String>, ErrorData> {
        let answer: ElicitResult = serde_json::from_value(answer.clone()).map_err(|e| {
            ErrorData::invalid_params(
                format!("`inputResponses.{INPUT_KEY}` is no elicitation result: {e}"),
                None,
            )
        })?;
        if answer.action != ElicitationAction::Accept {
            return Ok(None);
        }
        let value = answer
            .content
            .as_ref()
            .and_then(|c| c.get(self.argument))
            .and_then(Value::as_str);
        match value {
            Some(v) if self.options.iter().any(|o| o.value == v) => Ok(Some(v.to_owned())),
            _ => Err(ErrorData::invalid_params(
                format!(
                    "`inputResponses.{INPUT_KEY}` answers no choice offered for `{}` `{}`; offered: {}",
                    self.argument,
                    crate::platforms::http::brief(&self.asked),
                    self.options
                        .iter()
                        .map(|o| format!("`{}`", o.value))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None,
            )),
        }
    }
}

/// What the handler does with a call before its stack runs.
#[derive(Debug)]
pub enum Before {
    /// Run the call (its arguments now carry the choice, if one was made).
    Run,
    /// Answer this instead: the choice is put to the person.
    Ask(InputRequiredResult),
}

/// Whether a client that sent `context` can be asked by form elicitation.
fn elicits_form(capability: Option<&ElicitationCapability>) -> bool {
    capability.is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// Settles the choice `request`'s arguments leave open, if any, as the client allows
/// (see the module documentation): the choice made is written into the arguments.
/// A session-era client is asked for at most `wait`.
pub async fn before(
    request: &mut CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    wait: Duration,
) -> Result<Before, ErrorData> {
    let responses = request.input_responses.take();
    let Some(choice) = open(&request.name, request.arguments.as_ref()) else {
        return Ok(Before::Run);
    };
    if context.meta.protocol_version().is_some() {
        // 2026-07-28: an answer in the retry, else ask when this request allows it.
        if let Some(answer) = responses.as_ref().and_then(|r| r.get(INPUT_KEY)) {
            if let Some(value) = choice.chosen(answer)? {
                choose(request, &choice, value);
            }
            return Ok(Before::Run);
        }
        let caps = context.meta.client_capabilities();
        if elicits_form(caps.as_ref().and_then(|c| c.elicitation.as_ref())) {
            return Ok(Before::Ask(choice.input_required()));
        }
        return Ok(Before::Run);
    }
    let declared = context
        .peer
        .peer_info()
        .and_then(|i| i.capabilities.elicitation.clone());
    if elicits_form(declared.as_ref()) {
        let asked = context
            .peer
            .create_elicitation_with_timeout(choice.elicitation(), Some(wait));
        let answer = tokio::select! {
            answer = asked => answer.ok(),
            () = context.ct.cancelled() => None,
        };
        if let Some(answer) = answer
            && let Ok(answer) = serde_json::to_value(answer)
            && let Ok(Some(value)) = choice.chosen(&answer)
        {
            choose(request, &choice, value);
        }
    }
    Ok(Before::Run)
}

/// `request`'s arguments with `choice`'s argument set to `value`.
fn choose(request: &mut CallToolRequestParams, choice: &Choice, value: String) {
    request
        .arguments
        .get_or_insert_with(JsonObject::new)
        .insert(choice.argument.to_owned(), Value::String(value));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: Value) -> JsonObject {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn an_organisation_that_fits_several_is_a_choice_of_keys_titled_by_name() {
        let choice = open("cvdr_search", Some(&args(json!({"organization": "Utrecht"})))).expect("a choice");
        assert_eq!(choice.argument, "organization");
        let values: Vec<&str> = choice.options.iter().map(|o| o.value.as_str()).collect();
        assert!(
            values.contains(&"gemeente-utrecht") && values.contains(&"provincie-utrecht"),
            "{values:?}"
        );
        let schema = choice.schema();
        let one_of = schema["properties"]["organization"]["oneOf"].as_array().expect("oneOf");
        assert_eq!(one_of.len(), choice.options.len());
        assert!(
            one_of.iter().all(|o| o["const"].is_string() && o["title"].is_string()),
            "{schema}"
        );
        assert!(open("cvdr_search", Some(&args(json!({"organization": "gemeente-utrecht"})))).is_none());
        assert!(open("cvdr_search", Some(&args(json!({"query": "parkeren"})))).is_none());
        assert!(open("obv_status", Some(&args(json!({"organization": "Utrecht"})))).is_none());
    }

    #[test]
    fn an_answer_is_taken_only_when_it_is_one_of_the_choices() {
        let choice = open("cvdr_search", Some(&args(json!({"organization": "Utrecht"})))).expect("a choice");
        let accept = |v: &str| json!({"action": "accept", "content": {"organization": v}});
        assert_eq!(
            choice.chosen(&accept("provincie-utrecht")).expect("taken"),
            Some("provincie-utrecht".to_owned())
        );
        assert!(choice.chosen(&accept("gemeente-amsterdam")).is_err(), "not offered");
        assert!(choice.chosen(&json!({"action": "accept"})).is_err(), "no content");
        assert!(choice.chosen(&json!("yes")).is_err(), "no elicitation result");
        assert_eq!(choice.chosen(&json!({"action": "decline"})).expect("declined"), None);
        assert_eq!(choice.chosen(&json!({"action": "cancel"})).expect("cancelled"), None);
    }

    #[test]
    fn the_input_required_answer_holds_one_form_elicitation_and_no_state() {
        let choice = open("cvdr_search", Some(&args(json!({"organization": "Utrecht"})))).expect("a choice");
        let v = serde_json::to_value(choice.input_required()).expect("serialises");
        assert_eq!(v["resultType"], "input_required");
        assert!(v.get("requestState").is_none(), "{v}");
        let asked = &v["inputRequests"][INPUT_KEY];
        assert_eq!(asked["method"], "elicitation/create");
        assert_eq!(asked["params"]["mode"], "form");
        assert_eq!(asked["params"]["requestedSchema"], choice.schema());
    }
}
