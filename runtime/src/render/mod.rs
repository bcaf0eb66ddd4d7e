//! Render: the app model (for one target) as Kubernetes objects, printed as YAML or JSON.
//!
//! Deterministic: the same app renders byte-identical output. Objects come out in apply order, level by
//! level as `engine::plan::level` ranks kinds (namespace, CustomResourceDefinitions, identity and RBAC,
//! config, storage, workloads and custom objects (`resource`), Services, routing and policy), the included
//! objects of each level after the generated ones.
//! Secret values are never read here: they render as a redaction marker.

mod config;
mod containerfile;
mod custom;
mod meta;
mod netpol;
mod network;
mod operator;
mod operator_rbac;
mod policy;
mod workloads;
mod yaml;
mod yaml_scalar;

pub use containerfile::containerfile;
pub use meta::{COMPONENT_LABEL, MANAGED_BY, MANAGED_BY_LABEL, NAME_LABEL};

use crate::error::Error;
use meta::Cx;
use piceli_core::model::{App, Include};
use serde_json::Value;

/// What to render.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The target (default: the first declared, if any).
    pub target: Option<String>,
    /// The namespace (default: the target's, else `default`).
    pub namespace: Option<String>,
}

/// Rendered objects and what they were rendered for.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The target used, if any.
    pub target: Option<String>,
    /// The namespace used.
    pub namespace: String,
    /// The objects, in apply order, as JSON with `apiVersion` and `kind`.
    pub objects: Vec<Value>,
}

/// Where rendered objects go, one at a time, in apply order.
pub trait Sink {
    /// Take the next object.
    fn push(&mut self, object: Value);
}

impl Sink for Vec<Value> {
    fn push(&mut self, object: Value) {
        Vec::push(self, object);
    }
}

/// Writes each object as a YAML document as soon as it is rendered (nothing is kept but the text).
#[derive(Default)]
pub struct YamlSink {
    /// The documents so far.
    pub text: String,
}

impl YamlSink {
    /// Append one object as a YAML document.
    pub fn write(&mut self, object: &Value) {
        self.text.push_str("---\n");
        yaml::write_document(&mut self.text, object);
    }
}

impl Sink for YamlSink {
    fn push(&mut self, object: Value) {
        self.write(&object);
    }
}

/// Render the app for a target. Checks the app first (values from Rust expressions, includes).
pub fn render(app: &App, opts: &Options) -> Result<Rendered, Error> {
    let mut objects = Vec::new();
    let (target, namespace) = render_into(app, opts, &mut objects)?;
    Ok(Rendered {
        target,
        namespace,
        objects,
    })
}

/// Render the app for a target into a sink; returns the target and namespace used.
pub fn render_into(
    app: &App,
    opts: &Options,
    out: &mut dyn Sink,
) -> Result<(Option<String>, String), Error> {
    let target = match &opts.target {
        Some(name) => Some(app.target(name).ok_or_else(|| Error::UnknownTarget {
            name: name.clone(),
            declared: app.targets.iter().map(|t| t.name.v.clone()).collect(),
        })?),
        None => app.targets.first(),
    };
    let overridden;
    let app = match target {
        Some(t) if !t.overrides.is_empty() => {
            overridden = piceli_core::overrides::for_target(app, &t.name.v);
            &overridden
        }
        _ => app,
    };
    crate::load::check(app)?;
    let namespace = opts
        .namespace
        .clone()
        .or_else(|| target.map(|t| t.namespace.v.clone()))
        .unwrap_or_else(|| "default".to_string());
    let cx = Cx::new(app, namespace.clone(), target.map(|t| t.name.v.clone()));
    let mut included = Included::parse(&cx)?;
    // One phase per apply level (`engine::plan::level`): what `apply` applies, in its order.
    config::namespace(&cx, out)?;
    included.up_to(1, out); // Namespaces, then CustomResourceDefinitions
    policy::identity(&cx, out)?;
    operator::identity(&cx, out)?;
    included.up_to(2, out);
    config::config(&cx, out)?;
    included.up_to(3, out);
    config::storage(&cx, out)?;
    included.up_to(4, out);
    workloads::workloads(&cx, out)?;
    operator::workload(&cx, out)?;
    custom::resources(&cx, out)?;
    included.up_to(5, out);
    network::services(&cx, out)?;
    operator::service(&cx, out)?;
    included.up_to(6, out);
    network::routing(&cx, out)?;
    policy::scaling(&cx, out)?;
    operator::budget(&cx, out)?;
    included.up_to(u32::MAX, out);
    Ok((target.map(|t| t.name.v.clone()), namespace))
}

/// The app's included objects, marked as the app's and stably sorted by apply level, handed out level by
/// level after the objects the app generates at that level.
struct Included {
    objects: std::iter::Peekable<std::vec::IntoIter<(u32, Value)>>,
}

impl Included {
    fn parse(cx: &Cx) -> Result<Included, Error> {
        let mut all = Vec::new();
        for inc in &cx.app.includes {
            let objects: Vec<Value> = match inc {
                Include::File {
                    path,
                    contents,
                    json,
                } => piceli_core::include::parse_objects(&contents.v, *json)
                    .map_err(|e| Error::Include {
                        code: e.code,
                        message: e.describe(&path.v),
                    })?
                    .into_iter()
                    .map(|o| o.object)
                    .collect(),
                // A `List` from Rust is its items, as in a file.
                Include::Objects { objects, .. } => piceli_core::include::flatten_values(objects)
                    .map_err(|e| Error::Include {
                        code: e.code,
                        message: format!("include objects, object #{}: {}", e.line, e.message),
                    })?
                    .into_iter()
                    .map(|o| o.object)
                    .collect(),
            };
            for mut o in objects {
                cx.mark_included(&mut o);
                let level = crate::engine::plan::level(o["kind"].as_str().unwrap_or_default());
                all.push((level, o));
            }
        }
        all.sort_by_key(|(level, _)| *level);
        Ok(Included {
            objects: all.into_iter().peekable(),
        })
    }

    /// Writes the included objects of every level up to `level`.
    fn up_to(&mut self, level: u32, out: &mut dyn Sink) {
        while let Some((_, object)) = self.objects.next_if(|(l, _)| *l <= level) {
            out.push(object);
        }
    }
}

/// The CustomResourceDefinitions the app includes (those of its `custom_resource` types among them).
pub(crate) fn custom_resources(app: &App) -> Vec<&Value> {
    app.includes
        .iter()
        .filter_map(|inc| match inc {
            Include::Objects { objects, .. } => Some(objects),
            _ => None,
        })
        .flatten()
        .filter(|o| o["kind"] == "CustomResourceDefinition")
        .collect()
}

/// Multi-document YAML: every object starts with `---`. Long lines are never folded (image references stay
/// on one line); multi-line strings (config files) use literal blocks.
pub fn to_yaml(objects: &[Value]) -> Result<String, Error> {
    let mut sink = YamlSink::default();
    for o in objects {
        sink.write(o);
    }
    Ok(sink.text)
}

/// A JSON list (`kind: List`), pretty-printed.
pub fn to_json(objects: &[Value]) -> Result<String, Error> {
    let list = serde_json::json!({ "apiVersion": "v1", "kind": "List", "items": objects });
    serde_json::to_string_pretty(&list).map_err(|e| Error::Render(format!("JSON: {e}")))
}

/// Merge a block under the part of `object` at `path` (e.g. `["spec"]`): the block fills only what the
/// DSL left unset. Nothing happens when the block is empty.
pub(crate) fn merge_block(
    object: &mut Value,
    path: &[&str],
    block: &piceli_core::model::Block,
    ty: piceli_core::schema::TypeId,
) {
    if block.is_empty() {
        return;
    }
    let mut at = object;
    for p in path {
        let Some(next) = at.get_mut(*p) else {
            return;
        };
        at = next;
    }
    piceli_core::schema::merge::merge_block_under(at, block, ty);
}

/// Serialize a k8s-openapi object to JSON.
pub(crate) fn json<T: serde::Serialize>(what: &str, object: &T) -> Result<Value, Error> {
    serde_json::to_value(object).map_err(|e| Error::Render(format!("{what}: {e}")))
}
