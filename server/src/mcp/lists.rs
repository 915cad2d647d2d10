//! `lists` on `/mcp`: every platform's reference lists and status (a connector's
//! [`ConnectorSpec::lists`]: the courts, the factions, the sources, a load status) behind
//! one tool, chosen by `platform` and `list`, as `search` stands in for the keyword
//! searches and `fetch` for the readers. `/mcp` lists it in place of those tools, so the
//! list grows by a line of description per platform, not by a tool.
//!
//! Its arguments are `platform` and `list` (closed lists, from the registry) and every
//! argument of every list tool, declared once ([`super::passed::union`]: each says which
//! lists take it). An argument the chosen list does not take is refused by name, with the
//! ones it takes, before anything is asked.
//!
//! A call is the list tool's own call through the stack below replay ([`Stack::in_place`]:
//! its arguments checked by its own rules, the route to its platform's owner, the
//! time-out, its buffer and fair queue), as the caller; the answer is that tool's result
//! unchanged (text and structured content), with one last text item and `_meta`
//! (`besluitbron/tool`) naming the tool that answered.
//!
//! What this module does not do: know a platform or a list (the connectors declare
//! theirs), or answer a list itself.

use std::time::Duration;

use besluitbron_core::PlatformId;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, MetaObject, Tool};
use rmcp::schemars::{self, JsonSchema};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::ground::GroundRef;
use super::passed::{Declared, union};
use super::route::Want;
use crate::call::{Call, Reply, tool_error};
use crate::connectors::tool::{ToolSpec, invalid_arguments};
use crate::connectors::{ConnectorSpec, schema::portable};

/// The tool's name.
pub const NAME: &str = "lists";

/// The `_meta` key of an answer naming the tool that answered it.
pub const ANSWERED_BY: &str = "besluitbron/tool";

/// The arguments `lists` declares itself; every other is a list tool's.
const OWN: [&str; 2] = ["platform", "list"];

/// Arguments of `lists`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListsArgs {
    /// The platform's id.
    #[schemars(length(max = 40))]
    pub platform: String,
    /// The list (each platform's are in the description).
    #[schemars(length(max = 40))]
    pub list: String,
    /// The list tool's arguments, by name.
    #[serde(flatten)]
    #[schemars(skip)]
    pub passed: Map<String, Value>,
}

/// One list: its platform, its name among the platform's lists, and the tool answering it.
struct Part {
    platform: PlatformId,
    list: &'static str,
    tool: &'static ToolSpec,
    title: String,
    /// The names of its tool's arguments.
    takes: Vec<String>,
}

/// `lists` over the connectors served.
pub struct Lister {
    parts: Vec<Part>,
    /// The list tools' arguments, as `lists` declares them.
    passed: Map<String, Value>,
}

/// The name of `tool`'s list among its connector's (`connector`'s id): its name without
/// the connector's prefix (`rechtspraak_courts` is `courts`).
pub fn list_name<'a>(connector: &str, tool: &'a str) -> &'a str {
    tool.strip_prefix(connector)
        .and_then(|rest| rest.strip_prefix('_'))
        .filter(|rest| !rest.is_empty())
        .unwrap_or(tool)
}

impl Lister {
    /// `lists` over `connectors`, or `None` when none declares a list.
    pub fn new(connectors: &[&'static ConnectorSpec]) -> Option<Lister> {
        let mut parts = Vec::new();
        let mut schemas: Vec<(String, JsonObject)> = Vec::new();
        for c in connectors {
            for tool in c.lists {
                let definition = (tool.definition)();
                let list = list_name(c.id, tool.name);
                let mut schema = (*definition.input_schema).clone();
                portable(&mut schema);
                let takes = schema
                    .get("properties")
                    .and_then(Value::as_object)
                    .map(|p| p.keys().cloned().collect())
                    .unwrap_or_default();
                let title = definition
                    .annotations
                    .as_ref()
                    .and_then(|a| a.title.clone())
                    .or(definition.title.clone())
                    .unwrap_or_default();
                schemas.push((format!("{} {list}", c.id), (*definition.input_schema).clone()));
                parts.push(Part {
                    platform: c.platform,
                    list,
                    tool,
                    title,
                    takes,
                });
            }
        }
        if parts.is_empty() {
            return None;
        }
        let declared: Vec<Declared<'_>> = schemas
            .iter()
            .map(|(label, schema)| Declared {
                platform: label,
                schema,
            })
            .collect();
        Some(Lister {
            passed: union(&declared, &OWN),
            parts,
        })
    }

    /// The platforms with lists, in the registry's order.
    fn platforms(&self) -> Vec<PlatformId> {
        let mut out: Vec<PlatformId> = Vec::new();
        for p in &self.parts {
            if !out.contains(&p.platform) {
                out.push(p.platform);
            }
        }
        out
    }

    /// The definition `tools/list` shows (made portable by the caller).
    pub fn definition(&self) -> Tool {
        let mut tool = crate::connectors::tool::definition::<ListsArgs, Map<String, Value>>(
            NAME,
            "Reference lists and status",
            "",
        );
        tool.description = Some(self.description().into());
        let mut schema = (*tool.input_schema).clone();
        if let Some(Value::Object(properties)) = schema.get_mut("properties") {
            let ids: Vec<Value> = self.platforms().iter().map(|p| Value::from(p.as_str())).collect();
            let mut lists: Vec<Value> = Vec::new();
            for p in &self.parts {
                if !lists.contains(&Value::from(p.list)) {
                    lists.push(Value::from(p.list));
                }
            }
            for (name, values) in [("platform", ids), ("list", lists)] {
                if let Some(Value::Object(property)) = properties.get_mut(name) {
                    property.insert("enum".into(), Value::Array(values));
                }
            }
            properties.extend(self.passed.clone());
        }
        // Unknown arguments are refused by name before any platform is asked.
        schema.insert("additionalProperties".into(), Value::Bool(false));
        tool.input_schema = std::sync::Arc::new(schema);
        let mut output = JsonObject::new();
        output.insert("type".into(), Value::from("object"));
        output.insert(
            "description".into(),
            Value::from("The answering list tool's own structured content (its outputSchema at /<platform>/mcp)."),
        );
        tool.output_schema = Some(std::sync::Arc::new(output));
        tool
    }

    /// What `lists` says of itself: each platform's lists, by name and title (from the
    /// registry).
    fn description(&self) -> String {
        let per_platform: Vec<String> = self
            .platforms()
            .iter()
            .map(|platform| {
                let lists: Vec<String> = self
                    .parts
                    .iter()
                    .filter(|p| p.platform == *platform)
                    .map(|p| format!("`{}` ({})", p.list, p.title))
                    .collect();
                format!("{}: {}", platform.as_str(), lists.join(", "))
            })
            .collect();
        format!(
            "A platform's reference lists (the values its searches take) and its status, by `platform` and \
             `list`: {}. Each list's own arguments are arguments here (each says which lists take it; another is \
             refused). Answers the list's own tool's result; the last text names it.",
            per_platform.join("; ")
        )
    }

    /// The list `list` of the platform `platform`, or why there is none.
    fn part(&self, platform: &str, list: &str) -> Result<&Part, String> {
        let of_platform: Vec<&Part> = self.parts.iter().filter(|p| p.platform.as_str() == platform).collect();
        if of_platform.is_empty() {
            let ids: Vec<&str> = self.platforms().iter().map(|p| p.as_str()).collect();
            return Err(format!(
                "`platform` `{}` has no lists here; choose from {}",
                platform.chars().take(40).collect::<String>(),
                ids.join(", ")
            ));
        }
        of_platform.iter().find(|p| p.list == list).copied().ok_or_else(|| {
            let names: Vec<&str> = of_platform.iter().map(|p| p.list).collect();
            format!(
                "{platform} has no list `{}`; its lists: {}",
                list.chars().take(40).collect::<String>(),
                names.join(", ")
            )
        })
    }

    /// The list tool a call of `lists` with `arguments` asks, and that tool's arguments; or
    /// the message refusing them (nothing asked).
    fn chosen(&self, args: ListsArgs) -> Result<(&Part, JsonObject), String> {
        let part = self.part(&args.platform, &args.list)?;
        if let Some(other) = args.passed.keys().find(|k| !part.takes.contains(k)) {
            let takes = if part.takes.is_empty() {
                "none but `platform` and `list`".to_owned()
            } else {
                part.takes
                    .iter()
                    .map(|t| format!("`{t}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(format!(
                "{} {} takes no argument `{}`; it takes {takes}",
                part.platform.as_str(),
                part.list,
                other.chars().take(64).collect::<String>()
            ));
        }
        Ok((part, args.passed))
    }

    /// Runs `lists` for `call` with `arguments` (checked against its schema by the stack):
    /// the chosen list tool's own call through the stack below replay, its answer named.
    pub async fn run(&self, ground: GroundRef<'_>, call: &Call, arguments: JsonObject) -> Reply {
        let args: ListsArgs = match crate::connectors::tool::arguments(call, arguments) {
            Ok(args) => args,
            Err(reply) => return reply,
        };
        let platform = self.platforms().into_iter().find(|p| p.as_str() == args.platform);
        let (part, passed) = match self.chosen(args) {
            Ok(chosen) => chosen,
            Err(message) => return tool_error(invalid_arguments(NAME, platform, &message)).into(),
        };
        // Its own time-out says which platform held it up; this call's own comes later.
        let inner = GroundRef {
            limit: inner_limit(ground.limit),
            ..ground
        };
        let answer = ground
            .stack
            .in_place(inner, call, (part.tool.name, Want::Result), passed)
            .await;
        answered_by(answer.into_result().into_result(), part.tool.name, part.platform).into()
    }
}

/// The time the list tool's call may take within a call of `lists` that may take `limit`:
/// a second less (at least half), so that its own time-out, naming its platform, comes
/// first.
pub fn inner_limit(limit: Duration) -> Duration {
    limit.saturating_sub(Duration::from_secs(1)).max(limit / 2)
}

/// `result` as `lists` answers it: unchanged, with a last text item and `_meta` naming
/// `tool`, which answered it, and its platform.
fn answered_by(mut result: CallToolResult, tool: &str, platform: PlatformId) -> CallToolResult {
    result.content.push(ContentBlock::text(format!(
        "(answered by {tool}, {})",
        platform.display_name()
    )));
    let mut meta = result.meta.take().map(|m| m.0).unwrap_or_default();
    meta.insert(ANSWERED_BY.into(), Value::from(tool));
    result.meta = Some(MetaObject(meta));
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connectors::CONNECTORS;

    fn lister() -> Lister {
        Lister::new(&CONNECTORS.iter().collect::<Vec<_>>()).expect("connectors declare lists")
    }

    fn chosen(args: Value) -> Result<(&'static str, JsonObject), String> {
        let args: ListsArgs = serde_json::from_value(args).expect("lists' arguments");
        let l = Box::leak(Box::new(lister()));
        l.chosen(args).map(|(p, a)| (p.tool.name, a))
    }

    #[test]
    fn every_declared_list_is_chosen_by_its_platform_and_name() {
        for c in CONNECTORS {
            for tool in c.lists {
                assert!(
                    c.tools.iter().any(|t| t.name == tool.name),
                    "{}: one of its tools",
                    tool.name
                );
                let args = serde_json::json!({"platform": c.id, "list": list_name(c.id, tool.name)});
                assert_eq!(chosen(args).map(|c| c.0), Ok(tool.name));
            }
        }
        assert_eq!(list_name("rechtspraak", "rechtspraak_courts"), "courts");
        assert_eq!(list_name("tk2", "tk2_factions"), "factions");
        assert_eq!(list_name("tk", "other"), "other");
    }

    #[test]
    fn an_argument_the_list_does_not_take_is_refused_with_those_it_takes() {
        let (tool, passed) = chosen(serde_json::json!({"platform": "rechtspraak", "list": "courts",
            "filter": "Amsterdam", "limit": 5}))
        .expect("courts take both");
        assert_eq!(tool, "rechtspraak_courts");
        assert_eq!(passed.keys().collect::<Vec<_>>(), ["filter", "limit"]);
        let e = chosen(serde_json::json!({"platform": "rechtspraak", "list": "courts", "state": "any"})).unwrap_err();
        assert!(
            e.contains("`state`") && e.contains("`filter`") && e.contains("`include_ended`"),
            "{e}"
        );
        let e = chosen(serde_json::json!({"platform": "tk", "list": "factions", "name": "x"})).unwrap_err();
        assert!(e.contains("none but"), "{e}");
        let e = chosen(serde_json::json!({"platform": "tk", "list": "courts"})).unwrap_err();
        assert!(e.contains("factions, committees"), "{e}");
        let e = chosen(serde_json::json!({"platform": "bwb", "list": "courts"})).unwrap_err();
        assert!(e.contains("rechtspraak") && e.contains("obv"), "{e}");
    }

    #[test]
    fn the_definition_names_every_list_and_each_argument_says_who_takes_it() {
        let l = lister();
        let tool = l.definition();
        let description = tool.description.as_deref().unwrap_or_default();
        for c in CONNECTORS {
            for t in c.lists {
                assert!(
                    description.contains(&format!("`{}`", list_name(c.id, t.name))),
                    "{description}"
                );
            }
        }
        let properties = tool.input_schema["properties"].as_object().expect("properties");
        for name in [
            "platform",
            "list",
            "filter",
            "name",
            "state",
            "source",
            "organization_type",
            "limit",
        ] {
            assert!(properties.contains_key(name), "{name}: {properties:?}");
        }
        let state = properties["state"]["description"].as_str().unwrap_or_default();
        assert!(state.contains("obv status only"), "{state}");
        assert_eq!(tool.input_schema["additionalProperties"], Value::Bool(false));
    }

    #[test]
    fn the_answer_is_the_tools_own_with_its_name() {
        let mut own = CallToolResult::success(vec![ContentBlock::text("12 factions")]);
        own.structured_content = Some(serde_json::json!({"factions": []}));
        let out = answered_by(own.clone(), "tk_factions", crate::platforms::tk::PLATFORM);
        assert_eq!(out.content[0], own.content[0]);
        assert_eq!(out.structured_content, own.structured_content);
        let last = out.content.last().and_then(|c| c.as_text()).map(|t| t.text.clone());
        assert!(last.is_some_and(|t| t.contains("tk_factions")));
        assert_eq!(out.meta.expect("meta").0[ANSWERED_BY], "tk_factions");
    }
}
