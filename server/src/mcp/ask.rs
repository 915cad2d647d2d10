//! Asking back: a tool call whose argument names several things (an `organization`
//! that fits several municipalities, provinces and water boards, a `speaker` who is
//! one of several members) is put to the person as a choice, where the client can put
//! it, before anything else happens. Which arguments may, and how their values resolve
//! to choices, each connector declares on its tool ([`crate::connectors::ask`]); this
//! module names no platform and no tool.
//!
//! Who is asked:
//! - a 2026-07-28 request that declares form elicitation in its own capabilities gets
//!   `input_required` with one elicitation whose schema offers the choices of every
//!   argument left open (`oneOf` of `const`, the value, and `title`, the label a person
//!   reads); its retry carries the answer in `inputResponses` under [`INPUT_KEY`];
//! - a session-era client that declared form elicitation at `initialize` gets an
//!   `elicitation/create` request on the call's own stream, and the call goes on with
//!   the answer;
//! - every other client gets today's answer (the tool's own candidates), unchanged:
//!   nothing is resolved here for it.
//!
//! Invariants: the choices come from lists BesluitBron holds or the reference list the
//! tool itself reads (through that list's own platform call and buffer key), read from
//! the arguments alone — the tool's search is never made before the choice, and a retry
//! needs no state from the round that asked: any replica re-resolves the choices from
//! the arguments and takes an answer only when it is one of them (no `requestState` is
//! sent, so none is trusted). An `input_required` answer is made here, above the call
//! stack: it never enters the replay table or the render cache. A declined or cancelled
//! choice, or a session client that does not answer, gets today's answer.
//!
//! What this module does not do: resolve names (each connector's list does), or run the
//! call (the handler hands the arguments, with the choice made, to the call stack).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability, InputRequest,
    InputRequiredResult, JsonObject,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Value, json};

use super::tool_call::Calls;
use crate::call::Call;
use crate::connectors::ask::{AskArg, Resolution, Resolver};
use crate::identity::Caller;

/// The key of BesluitBron's one elicitation in `inputRequests` and `inputResponses`.
pub const INPUT_KEY: &str = "choice";

/// The choices a call's arguments leave open: one form, one field each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The tool called.
    pub tool: String,
    /// The arguments that name several things, in the order the tool declares them:
    /// never empty.
    pub open: Vec<Open>,
}

/// One argument that names several things.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Open {
    /// The argument.
    pub argument: &'static str,
    /// What it names, in the plural: "organisations".
    pub names: &'static str,
    /// What the caller wrote.
    pub asked: String,
    /// What it may stand for, best first: at least two, each value once.
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

/// The text value of `name` in `arguments`, trimmed, if not empty.
fn text<'a>(arguments: Option<&'a JsonObject>, name: &str) -> Option<&'a str> {
    arguments
        .and_then(|a| a.get(name))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// The argument `declared` left open by `asked`, from its `resolution`: `None` unless it
/// has two choices or more (each value offered once).
pub fn opened(declared: &AskArg, asked: &str, resolution: Resolution) -> Option<Open> {
    let Resolution::Choices(choices) = resolution else {
        return None;
    };
    let mut options: Vec<Offered> = Vec::new();
    for c in choices {
        if !c.value.is_empty() && !options.iter().any(|o| o.value == c.value) {
            let title = if c.label.is_empty() { c.value.clone() } else { c.label };
            options.push(Offered { value: c.value, title });
        }
    }
    (options.len() > 1).then(|| Open {
        argument: declared.argument,
        names: declared.names,
        asked: asked.to_owned(),
        options,
    })
}

/// The choices a call of `request` leaves open, resolved as its tool declares (no
/// search is made; a reference list is read as `caller`, within `wait`); `None` when
/// its arguments name one thing each.
pub async fn open(
    calls: &Calls,
    request: &CallToolRequestParams,
    caller: &Arc<Caller>,
    context: &RequestContext<RoleServer>,
    wait: Duration,
) -> Option<Choice> {
    let tools = calls.tools();
    let entry = tools.get(&request.name)?;
    let mut open = Vec::new();
    for declared in entry.asks() {
        let Some(asked) = text(request.arguments.as_ref(), declared.argument) else {
            continue;
        };
        let resolution = match declared.resolver {
            Resolver::Held(resolve) => resolve(asked),
            Resolver::Listed { tool, resolve } => {
                // A list read is a platform call: the shutdown drain waits for it.
                let _running = calls.running_guard();
                let Some(platform) = tools.get(tool).and_then(|t| t.platform) else {
                    continue;
                };
                let call = Call {
                    tool,
                    platform: Some(platform),
                    caller: Arc::clone(caller),
                    form: Arc::from(tool),
                    progress: None,
                    ct: context.ct.clone(),
                    render_cache: None,
                };
                super::ground::in_time(wait, resolve(&calls.ctx, &call, asked))
                    .await
                    .unwrap_or(Resolution::Unknown)
            }
        };
        open.extend(opened(declared, asked, resolution));
    }
    (!open.is_empty()).then(|| Choice {
        tool: request.name.to_string(),
        open,
    })
}

impl Choice {
    /// What the person is asked.
    pub fn message(&self) -> String {
        self.open
            .iter()
            .map(|o| {
                format!(
                    "`{}` fits {} {}. Which one is meant?",
                    crate::platforms::http::brief(&o.asked),
                    o.options.len(),
                    o.names
                )
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The elicitation's schema: one required string per open argument, one of its
    /// values, each titled.
    pub fn schema(&self) -> Value {
        let mut properties = serde_json::Map::new();
        for o in &self.open {
            let one_of: Vec<Value> = o
                .options
                .iter()
                .map(|c| json!({"const": c.value, "title": c.title}))
                .collect();
            properties.insert(
                o.argument.to_owned(),
                json!({
                    "type": "string",
                    "title": o.argument,
                    "description": format!("The one `{}` meant by `{}`", o.argument, o.asked),
                    "oneOf": one_of,
                }),
            );
        }
        let required: Vec<&str> = self.open.iter().map(|o| o.argument).collect();
        json!({"type": "object", "properties": properties, "required": required})
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

    /// The values a person chose, argument by argument, from their answer to the
    /// elicitation: `Ok(None)` when they declined or cancelled; an error when the answer
    /// to any open argument is none of its options.
    pub fn chosen(&self, answer: &Value) -> Result<Option<Vec<(&'static str, String)>>, ErrorData> {
        let answer: ElicitResult = serde_json::from_value(answer.clone()).map_err(|e| {
            ErrorData::invalid_params(
                format!("`inputResponses.{INPUT_KEY}` is no elicitation result: {e}"),
                None,
            )
        })?;
        if answer.action != ElicitationAction::Accept {
            return Ok(None);
        }
        let mut chosen = Vec::new();
        for o in &self.open {
            let value = answer
                .content
                .as_ref()
                .and_then(|c| c.get(o.argument))
                .and_then(Value::as_str);
            match value {
                Some(v) if o.options.iter().any(|c| c.value == v) => chosen.push((o.argument, v.to_owned())),
                _ => return Err(not_offered(o)),
            }
        }
        Ok(Some(chosen))
    }
}

/// The error for an answer to `open` that is none of its options.
fn not_offered(open: &Open) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "`inputResponses.{INPUT_KEY}` answers no choice offered for `{}` `{}`; offered: {}",
            open.argument,
            crate::platforms::http::brief(&open.asked),
            open.options
                .iter()
                .map(|o| format!("`{}`", o.value))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None,
    )
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

/// Settles the choices `request`'s arguments leave open, if any, as the client allows
/// (see the module documentation), the tool's lists read as `caller`: the choices made
/// are written into the arguments. A session-era client is asked for at most `wait`.
pub async fn before(
    calls: &Calls,
    caller: &Arc<Caller>,
    request: &mut CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    wait: Duration,
) -> Result<Before, ErrorData> {
    let responses = request.input_responses.take();
    if context.meta.protocol_version().is_some() {
        // 2026-07-28: an answer in the retry, else ask when this request allows it.
        let answer = responses.as_ref().and_then(|r| r.get(INPUT_KEY));
        let caps = context.meta.client_capabilities();
        if answer.is_none() && !elicits_form(caps.as_ref().and_then(|c| c.elicitation.as_ref())) {
            return Ok(Before::Run);
        }
        let Some(choice) = open(calls, request, caller, context, wait).await else {
            return Ok(Before::Run);
        };
        if let Some(answer) = answer {
            if let Some(values) = choice.chosen(answer)? {
                choose(request, values);
            }
            return Ok(Before::Run);
        }
        return Ok(Before::Ask(choice.input_required()));
    }
    let declared = context
        .peer
        .peer_info()
        .and_then(|i| i.capabilities.elicitation.clone());
    if !elicits_form(declared.as_ref()) {
        return Ok(Before::Run);
    }
    let Some(choice) = open(calls, request, caller, context, wait).await else {
        return Ok(Before::Run);
    };
    let asked = context
        .peer
        .create_elicitation_with_timeout(choice.elicitation(), Some(wait));
    let answer = tokio::select! {
        answer = asked => answer.ok(),
        () = context.ct.cancelled() => None,
    };
    if let Some(answer) = answer
        && let Ok(answer) = serde_json::to_value(answer)
        && let Ok(Some(values)) = choice.chosen(&answer)
    {
        choose(request, values);
    }
    Ok(Before::Run)
}

/// `request`'s arguments with each chosen argument set to its value.
fn choose(request: &mut CallToolRequestParams, values: Vec<(&'static str, String)>) {
    let arguments = request.arguments.get_or_insert_with(JsonObject::new);
    for (argument, value) in values {
        arguments.insert(argument.to_owned(), Value::String(value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connectors::offers;

    const PLACE: AskArg = AskArg {
        argument: "organization",
        names: "organisations",
        resolver: Resolver::Held(|_| Resolution::Unknown),
    };

    fn choices(pairs: &[(&str, &str)]) -> Resolution {
        Resolution::Choices(
            pairs
                .iter()
                .map(|(v, l)| offers::Choice {
                    value: (*v).to_owned(),
                    label: (*l).to_owned(),
                })
                .collect(),
        )
    }

    fn utrecht() -> Choice {
        let open = opened(
            &PLACE,
            "Utrecht",
            choices(&[
                ("gemeente-utrecht", "Gemeente Utrecht"),
                ("provincie-utrecht", "Provincie Utrecht"),
            ]),
        );
        Choice {
            tool: "x_search".to_owned(),
            open: open.into_iter().collect(),
        }
    }

    #[test]
    fn an_argument_is_open_only_with_two_choices_or_more_each_value_once_titled() {
        assert_eq!(utrecht().open.len(), 1);
        let schema = utrecht().schema();
        let one_of = schema["properties"]["organization"]["oneOf"].as_array().expect("oneOf");
        assert_eq!(one_of.len(), 2);
        assert!(
            one_of.iter().all(|o| o["const"].is_string() && o["title"].is_string()),
            "{schema}"
        );
        assert_eq!(schema["required"], json!(["organization"]));
        assert!(opened(&PLACE, "x", Resolution::Exact).is_none());
        assert!(opened(&PLACE, "x", Resolution::Unknown).is_none());
        assert!(
            opened(&PLACE, "x", choices(&[("a", "A")])).is_none(),
            "one is no choice"
        );
        assert!(
            opened(&PLACE, "x", choices(&[("a", "A"), ("a", "A again")])).is_none(),
            "one value twice"
        );
        let untitled = opened(&PLACE, "x", choices(&[("a", ""), ("b", "B")])).expect("open");
        assert_eq!(
            untitled.options[0].title, "a",
            "a value without a label reads as itself"
        );
        assert!(
            utrecht().message().contains("fits 2 organisations"),
            "{}",
            utrecht().message()
        );
    }

    #[test]
    fn an_answer_is_taken_only_when_it_is_one_of_the_choices() {
        let choice = utrecht();
        let accept = |v: &str| json!({"action": "accept", "content": {"organization": v}});
        assert_eq!(
            choice.chosen(&accept("provincie-utrecht")).expect("taken"),
            Some(vec![("organization", "provincie-utrecht".to_owned())])
        );
        assert!(choice.chosen(&accept("gemeente-amsterdam")).is_err(), "not offered");
        assert!(choice.chosen(&json!({"action": "accept"})).is_err(), "no content");
        assert!(choice.chosen(&json!("yes")).is_err(), "no elicitation result");
        assert_eq!(choice.chosen(&json!({"action": "decline"})).expect("declined"), None);
        assert_eq!(choice.chosen(&json!({"action": "cancel"})).expect("cancelled"), None);
    }

    #[test]
    fn two_open_arguments_are_one_form_and_both_must_be_answered() {
        const COURT: AskArg = AskArg {
            argument: "court",
            names: "courts",
            resolver: Resolver::Held(|_| Resolution::Unknown),
        };
        let mut choice = utrecht();
        choice.open.extend(opened(
            &COURT,
            "Rb",
            choices(&[("rb-a", "Rechtbank A"), ("rb-b", "Rechtbank B")]),
        ));
        let schema = choice.schema();
        assert_eq!(schema["required"], json!(["organization", "court"]));
        let both = json!({"action": "accept", "content": {"organization": "gemeente-utrecht", "court": "rb-b"}});
        assert_eq!(
            choice.chosen(&both).expect("taken"),
            Some(vec![
                ("organization", "gemeente-utrecht".to_owned()),
                ("court", "rb-b".to_owned())
            ])
        );
        let one = json!({"action": "accept", "content": {"organization": "gemeente-utrecht"}});
        assert!(choice.chosen(&one).is_err(), "the court left unanswered");
    }

    #[test]
    fn the_input_required_answer_holds_one_form_elicitation_and_no_state() {
        let choice = utrecht();
        let v = serde_json::to_value(choice.input_required()).expect("serialises");
        assert_eq!(v["resultType"], "input_required");
        assert!(v.get("requestState").is_none(), "{v}");
        let asked = &v["inputRequests"][INPUT_KEY];
        assert_eq!(asked["method"], "elicitation/create");
        assert_eq!(asked["params"]["mode"], "form");
        assert_eq!(asked["params"]["requestedSchema"], choice.schema());
    }
}
