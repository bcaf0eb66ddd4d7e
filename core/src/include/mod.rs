//! Reading included YAML/JSON files into objects, with errors that name the file and line.
//!
//! The macro runs this at compile time on literal paths; the runtime runs it again on the embedded text,
//! so both report the same code and position.

use crate::codes::Code;
use crate::model::{Container, ContainerPort, IncludedWorkload, Workload, WorkloadKind};
use crate::spanned::{Loc, Spanned};
use serde_json::Value;

mod checks;
mod service;
pub mod yaml;

pub use checks::*;
pub use service::included_service;

/// A problem in an included file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IncludeError {
    /// `PCL0035` (does not parse) or `PCL0036` (not an object).
    pub code: Code,
    /// 1-based line in the file.
    pub line: usize,
    /// 1-based column, when known.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl IncludeError {
    /// `file:line:column: message`.
    pub fn describe(&self, file: &str) -> String {
        format!("{file}:{}:{}: {}", self.line, self.column, self.message)
    }
}

/// One object of an included file and the line its document starts at.
#[derive(Debug, Clone, PartialEq)]
pub struct IncludedObject {
    /// 1-based line where its document starts.
    pub line: usize,
    /// The object.
    pub object: Value,
}

/// Parse a file's text: JSON (an object, a list of objects, or a `List` kind) when `json`, otherwise YAML
/// documents separated by `---`. Every object must have `apiVersion`, `kind` and `metadata.name`.
pub fn parse_objects(text: &str, json: bool) -> Result<Vec<IncludedObject>, IncludeError> {
    let raw = if json {
        parse_json(text)?
    } else {
        parse_yaml(text)?
    };
    let mut out = Vec::new();
    for (line, value) in raw {
        flatten(line, value, &mut out)?;
    }
    Ok(out)
}

/// Check objects built in Rust (`include objects(…)`): the same rules as for files. The error's `line`
/// is the object's 1-based position in the list.
pub fn check_values(values: &[Value]) -> Result<(), IncludeError> {
    match flatten_values(values)?
        .iter()
        .flat_map(object_problems)
        .next()
    {
        Some((error, _)) => Err(error),
        None => Ok(()),
    }
}

/// Objects built in Rust as the objects they stand for: a `kind: …List` (or a JSON array) becomes its
/// items. Each keeps its 1-based position in `values` as its `line`. Every object must have
/// `apiVersion`, `kind` and `metadata.name`.
pub fn flatten_values(values: &[Value]) -> Result<Vec<IncludedObject>, IncludeError> {
    let mut out = Vec::new();
    for (i, v) in values.iter().enumerate() {
        flatten(i + 1, v.clone(), &mut out)?;
    }
    Ok(out)
}

fn parse_json(text: &str) -> Result<Vec<(usize, Value)>, IncludeError> {
    serde_json::from_str::<Value>(text)
        .map(|v| vec![(1, v)])
        .map_err(|e| IncludeError {
            code: Code::IncludeMalformed,
            line: e.line(),
            column: e.column(),
            message: format!("invalid JSON: {e}"),
        })
}

/// Split on `---` document markers (tracking where each document starts) and parse each document.
fn parse_yaml(text: &str) -> Result<Vec<(usize, Value)>, IncludeError> {
    let mut docs: Vec<(usize, String)> = vec![(1, String::new())];
    for (i, line) in text.lines().enumerate() {
        if line == "---" || line.starts_with("--- ") || line == "..." {
            docs.push((i + 2, String::new()));
            continue;
        }
        if let Some((_, doc)) = docs.last_mut() {
            doc.push_str(line);
            doc.push('\n');
        }
    }
    let mut out = Vec::new();
    for (start, doc) in docs {
        if doc.lines().all(|l| {
            let t = l.trim();
            t.is_empty() || t.starts_with('#')
        }) {
            continue;
        }
        let value: Value = yaml::from_str(&doc).map_err(|e| {
            let (line, column) = e
                .location()
                .map(|l| (l.line() as usize, l.column() as usize))
                .unwrap_or((1, 1));
            let message = e.to_string();
            let first = message.lines().next().unwrap_or("invalid YAML");
            // The parser's position is relative to the document; ours (in the prefix) is the file's.
            let first = first.split(" at line ").next().unwrap_or(first).to_string();
            IncludeError {
                code: Code::IncludeMalformed,
                line: start + line.saturating_sub(1),
                column: column.max(1),
                message: format!("invalid YAML: {first}"),
            }
        })?;
        if !value.is_null() {
            out.push((start, value));
        }
    }
    Ok(out)
}

fn flatten(line: usize, value: Value, out: &mut Vec<IncludedObject>) -> Result<(), IncludeError> {
    let not_object = |message: String| IncludeError {
        code: Code::IncludeNotObject,
        line,
        column: 1,
        message,
    };
    match value {
        Value::Array(items) => {
            for item in items {
                flatten(line, item, out)?;
            }
            Ok(())
        }
        Value::Object(map) => {
            let kind = map.get("kind").and_then(Value::as_str).unwrap_or_default();
            if kind.ends_with("List") && map.get("items").is_some_and(Value::is_array) {
                if let Some(Value::Array(items)) = map.get("items") {
                    for item in items.clone() {
                        flatten(line, item, out)?;
                    }
                }
                return Ok(());
            }
            if map
                .get("apiVersion")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                return Err(not_object("the document has no `apiVersion`".into()));
            }
            if kind.is_empty() {
                return Err(not_object("the document has no `kind`".into()));
            }
            let has_name = map
                .get("metadata")
                .and_then(|m| m.get("name"))
                .and_then(Value::as_str)
                .is_some_and(|n| !n.is_empty());
            if !has_name {
                return Err(not_object(format!("the {kind} has no `metadata.name`")));
            }
            out.push(IncludedObject {
                line,
                object: Value::Object(map),
            });
            Ok(())
        }
        other => Err(not_object(format!(
            "expected a Kubernetes object (a mapping), found {}",
            match other {
                Value::String(_) => "a string",
                Value::Number(_) => "a number",
                Value::Bool(_) => "a boolean",
                _ => "null",
            }
        ))),
    }
}

/// The workload kind of an object: an apps/v1 Deployment, StatefulSet or DaemonSet, a batch/v1 Job or
/// CronJob.
pub fn workload_kind(object: &Value) -> Option<WorkloadKind> {
    Some(
        match (object["apiVersion"].as_str()?, object["kind"].as_str()?) {
            ("apps/v1", "Deployment") => WorkloadKind::Deployment,
            ("apps/v1", "StatefulSet") => WorkloadKind::StatefulSet,
            ("apps/v1", "DaemonSet") => WorkloadKind::DaemonSet,
            ("batch/v1", "Job") => WorkloadKind::Job,
            ("batch/v1", "CronJob") => WorkloadKind::CronJob,
            _ => return None,
        },
    )
}

/// The workload an included object is — an apps/v1 Deployment, StatefulSet or DaemonSet, a batch/v1 Job or
/// CronJob — as Services and the other items that refer to it see it (its name and the locations of what
/// it declares at `at`); `None` for any other object.
pub fn included_workload(object: &Value, at: Loc) -> Option<IncludedWorkload> {
    let kind = workload_kind(object)?;
    let name = object["metadata"]["name"].as_str()?;
    let spec = match kind {
        WorkloadKind::CronJob => &object["spec"]["jobTemplate"]["spec"],
        _ => &object["spec"],
    };
    let template = &spec["template"];
    let labels = |v: &Value| -> Vec<(String, String)> {
        v.as_object()
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut selector = labels(&spec["selector"]["matchLabels"]);
    if selector.is_empty() {
        selector = labels(&template["metadata"]["labels"]);
    }
    let spanned = |s: &str| Spanned::new(s.to_string(), at);
    let containers = template["spec"]["containers"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| Container {
                    name: spanned(c["name"].as_str().unwrap_or_default()),
                    image: spanned(c["image"].as_str().unwrap_or_default()),
                    ports: c["ports"]
                        .as_array()
                        .map(|ps| {
                            ps.iter()
                                .filter_map(|p| {
                                    Some(ContainerPort {
                                        name: spanned(p["name"].as_str().unwrap_or_default()),
                                        number: Spanned::new(p["containerPort"].as_i64()?, at),
                                        protocol: p["protocol"].as_str().map(spanned),
                                    })
                                })
                                .collect()
                        })
                        .unwrap_or_default(),
                    ..Container::default()
                })
                .collect()
        })
        .unwrap_or_default();
    Some(IncludedWorkload {
        workload: Workload {
            kind,
            name: spanned(name),
            containers,
            ..Workload::default()
        },
        selector,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_document_yaml_with_lines() {
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n# comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n";
        let objects = parse_objects(text, false).expect("parses");
        assert_eq!(objects.len(), 2);
        assert_eq!(objects[0].line, 1);
        assert_eq!(objects[1].line, 8);
        assert_eq!(objects[1].object["metadata"]["name"], "b");
    }

    #[test]
    fn included_yaml_is_kubernetes_yaml() {
        // `include yaml` reads YAML 1.1 as kubectl does (the cases are in `yaml`'s tests).
        let text = "apiVersion: v1\nkind: Secret\nmetadata: {name: a}\nimmutable: yes\ntype: ~\nstringData: {mode: 0744, flag: on}\n";
        let objects = parse_objects(text, false).expect("parses");
        let secret = &objects[0].object;
        assert_eq!(secret["immutable"], true);
        assert!(secret["type"].is_null());
        assert_eq!(secret["stringData"]["mode"], 484);
        assert_eq!(secret["stringData"]["flag"], true);
    }

    #[test]
    fn malformed_yaml_names_the_line() {
        let text =
            "apiVersion: v1\nkind: ConfigMap\n---\napiVersion: v1\nkind: [unclosed\nmetadata: {}\n";
        let err = parse_objects(text, false).expect_err("malformed");
        assert_eq!(err.code, Code::IncludeMalformed);
        assert!(err.line >= 5, "line {}", err.line);
    }

    #[test]
    fn missing_kind_and_name() {
        let err =
            parse_objects("apiVersion: v1\nmetadata:\n  name: x\n", false).expect_err("no kind");
        assert_eq!(err.code, Code::IncludeNotObject);
        assert!(err.message.contains("kind"));
        let err = parse_objects("---\napiVersion: v1\nkind: Service\nmetadata: {}\n", false)
            .expect_err("no name");
        assert_eq!((err.code, err.line), (Code::IncludeNotObject, 2));
        assert!(err.message.contains("metadata.name"));
        let err = parse_objects("just a string\n", false).expect_err("scalar");
        assert_eq!(err.code, Code::IncludeNotObject);
    }

    #[test]
    fn rust_built_objects_are_checked() {
        let good =
            serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
        let bad = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}});
        assert!(check_values(std::slice::from_ref(&good)).is_ok());
        let err = check_values(&[good, bad]).expect_err("no name");
        assert_eq!((err.code, err.line), (Code::IncludeNotObject, 2));
    }

    #[test]
    fn json_lists_and_errors() {
        let text = r#"{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}]}"#;
        assert_eq!(parse_objects(text, true).expect("parses").len(), 1);
        let err = parse_objects("{\n  \"kind\": \n}", true).expect_err("bad json");
        assert_eq!((err.code, err.line), (Code::IncludeMalformed, 3));
    }

    #[test]
    fn an_included_deployment_is_known_by_its_selector_and_ports() {
        let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n  selector: {matchLabels: {app: api}}\n  template:\n    metadata: {labels: {app: api, tier: backend}}\n    spec:\n      containers:\n        - name: server\n          image: ghcr.io/acme/api:1\n          ports: [{name: http, containerPort: 8000}, {containerPort: 9090}]\n";
        let objects = parse_objects(text, false).expect("parses");
        let w = included_workload(&objects[0].object, Loc(3)).expect("a workload");
        assert_eq!(w.workload.kind, WorkloadKind::Deployment);
        assert_eq!(w.workload.name.v, "api");
        assert_eq!(w.selector, [("app".to_string(), "api".to_string())]);
        let ports: Vec<(&str, i64)> = w.workload.containers[0]
            .ports
            .iter()
            .map(|p| (p.name.v.as_str(), p.number.v))
            .collect();
        assert_eq!(ports, [("http", 8000), ("", 9090)]);
        let cm =
            serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}});
        assert!(included_workload(&cm, Loc(0)).is_none());
    }
}
