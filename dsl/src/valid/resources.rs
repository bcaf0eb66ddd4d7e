//! Lowering `crds "DIR";` and `resource GROUP/VERSION/KIND NAME { … }`: CustomResourceDefinition files
//! read when the macro runs (each tracked, so an edit rebuilds), and objects of their kinds, whose fields
//! are checked against the version's `openAPIV3Schema` by the walk the built-in blocks use.

use super::block_values::Within;
use super::fields::unknown_key_help;
use super::keys::Key;
use super::{DynamicKind, Fields, Lower};
use crate::ast::{Item, Value};
use piceli_core::Code;
use piceli_core::crd::{self, Crd, Found, Node};
use piceli_core::model::{Block, CustomObject, Include};
use piceli_core::schema::check::check_object;
use piceli_core::spanned::Spanned;

/// What a `crds` item read.
#[derive(Default)]
pub struct Crds {
    /// Every CRD of every file.
    pub defined: Vec<Crd>,
    /// The files read, relative to the crate, for the expansion to track.
    pub files: Vec<String>,
}

/// The keys of `crds "DIR" { … }` (for docs/dsl.md's key reference and unknown-key errors).
pub const CRDS: &[Key] = &[Key::new(
    "install",
    "`true`: the CRDs are rendered and applied first (the engine's CRD rules apply); otherwise `plan` requires the cluster to serve them (PCL0238)",
    None,
)];

/// The keys of `resource KIND NAME { … }` besides the CRD's top-level fields.
pub const RESOURCE: &[Key] = &[
    Key::new(
        "spec",
        "the object's `spec`, and so any other top-level field of the CRD's schema (not `apiVersion`, `kind`, `metadata`, `status`): checked against the version's `openAPIV3Schema`",
        None,
    ),
    Key::new("labels", "labels of this object alone", None),
    Key::new("annotations", "annotations of this object alone", None),
    Key::new(
        "namespace",
        "refused: a namespaced kind deploys to the target's namespace, a cluster-scoped one has none (PCL0237)",
        None,
    ),
];

/// Top-level fields of a custom object that Piceli sets.
const SET_BY_PICELI: &[(&str, &str)] = &[
    (
        "apiVersion",
        "Piceli sets it from the kind after `resource`",
    ),
    ("kind", "Piceli sets it from the kind after `resource`"),
    (
        "metadata",
        "the name is the item's; set labels and annotations with `labels:` and `annotations:`",
    ),
    (
        "status",
        "the status is written by the resource's controller, not by the app",
    ),
];

/// `crds "DIR" [{ install: true }];`
pub(super) fn crds(lw: &mut Lower, item: &Item) {
    let Some(path) = &item.name else {
        lw.fail(
            Code::MissingKey,
            item.keyword.sp,
            "`crds` needs the path of CRD files",
            "write `crds \"crds/\";` (a directory or a file, relative to the crate)",
        );
        return;
    };
    let mut f = Fields::of(lw, item.body.as_ref(), format!("crds \"{}\"", path.text));
    let install = match f.take("install") {
        Some(v) => lw.bool(v).unwrap_or(false),
        None => false,
    };
    f.finish_keys(lw, CRDS);
    let files = match files_of(&super::config::crate_dir(), &path.text) {
        Ok(files) if files.is_empty() => {
            lw.fail(
                Code::CrdFile,
                path.sp,
                format!("`{}` holds no `.yaml` or `.yml` file", path.text),
                "put the CRD YAML files there, or name the file itself",
            );
            return;
        }
        Ok(files) => files,
        Err(e) => {
            lw.fail(
                Code::CrdFile,
                path.sp,
                format!("cannot read `{}`: {e}", path.text),
                "paths are relative to the directory of this crate's Cargo.toml (CARGO_MANIFEST_DIR)",
            );
            return;
        }
    };
    for (rel, full) in files {
        let text = match std::fs::read_to_string(&full) {
            Ok(text) => text,
            Err(e) => {
                lw.fail(
                    Code::CrdFile,
                    path.sp,
                    format!("cannot read `{rel}`: {e}"),
                    "make the file readable, or remove it from the directory",
                );
                continue;
            }
        };
        match crd::read(&text, &rel) {
            Ok(found) => lw.crds.defined.extend(found),
            Err(e) => {
                lw.fail(
                    Code::CrdFile,
                    path.sp,
                    &e,
                    "vendor the CRDs as their project ships them: `apiextensions.k8s.io/v1` CustomResourceDefinitions",
                );
                continue;
            }
        }
        if install {
            // Rendered and applied before the app's objects, as an included file's CRDs are.
            // The path's location first: `crds` items are lowered before the others, and a location 0
            // must not be a run-time value (a model's `Spanned::default()` also says `Loc(0)`).
            let path_at = lw.loc(path.sp, format!("crds \"{}\"", path.text));
            let at = lw.loc(path.sp, format!("crds {rel} contents"));
            lw.dynamic(at, DynamicKind::File(rel.clone()));
            lw.app.includes.push(Include::File {
                path: Spanned::new(rel.clone(), path_at),
                contents: Spanned::new(String::new(), at),
                json: false,
            });
        }
        lw.crds.files.push(rel);
    }
}

/// The YAML files at `path` (relative to `base`): the file itself, or a directory's `.yaml`/`.yml`
/// files in name order; each as written relative to the crate and in full.
fn files_of(
    base: &std::path::Path,
    path: &str,
) -> std::io::Result<Vec<(String, std::path::PathBuf)>> {
    let full = base.join(path);
    if !full.is_dir() {
        std::fs::metadata(&full)?;
        return Ok(vec![(path.to_string(), full)]);
    }
    let mut names: Vec<String> = std::fs::read_dir(&full)?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yaml") || n.ends_with(".yml"))
        .collect();
    names.sort();
    let dir = path.trim_end_matches('/');
    Ok(names
        .into_iter()
        .map(|n| (format!("{dir}/{n}"), full.join(&n)))
        .collect())
}

/// `resource GROUP/VERSION/KIND NAME { spec: { … }, labels: { … } }`
pub(super) fn resource(lw: &mut Lower, item: &Item) {
    let Some(kind) = &item.qualifier else {
        lw.fail(
            Code::MissingKey,
            item.keyword.sp,
            "`resource` needs a kind and a name",
            "write `resource gateway.networking.k8s.io/v1/HTTPRoute web { spec: { … } }`",
        );
        return;
    };
    let Some(name) = lw.item_name(item) else {
        return;
    };
    // Borrowed while the item is lowered (nothing is copied but the schema a run-time value needs).
    let defined = std::mem::take(&mut lw.crds.defined);
    if let Some(object) = custom_object(lw, item, kind, name, &defined) {
        lw.app.resources.push(object);
    }
    lw.crds.defined = defined;
}

/// The custom object of a `resource` item, when its kind is found.
fn custom_object(
    lw: &mut Lower,
    item: &Item,
    kind: &crate::ast::NameTok,
    name: Spanned<String>,
    defined: &[Crd],
) -> Option<CustomObject> {
    let (crd, version) = match crd::find(defined, &kind.text) {
        Found::One(c, v) => (c, v),
        Found::Unknown { closest, known } => {
            let help = match (closest, lw.crds.files.is_empty()) {
                (_, true) => {
                    "read the CRD first: `crds \"crds/\";` (its YAML files, relative to the crate)"
                        .to_string()
                }
                (Some(c), _) => format!("did you mean `{c}`?"),
                (None, _) => format!("the CRDs read define: {}", known.join(", ")),
            };
            lw.fail(
                Code::UnknownCustomKind,
                kind.sp,
                format!("no CRD of the app defines `{}`", kind.text),
                help,
            );
            return None;
        }
        Found::Ambiguous(candidates) => {
            lw.fail(
                Code::AmbiguousCustomKind,
                kind.sp,
                format!(
                    "`{}` is defined by several CRDs: {}",
                    kind.text,
                    candidates.join(", ")
                ),
                format!(
                    "write the whole name, e.g. `resource {} {}`",
                    candidates[0], name.v
                ),
            );
            return None;
        }
    };
    let full = crd::full_name(crd, version);
    let owner = format!("resource {full} {}", name.v);
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    let labels = f
        .take("labels")
        .map(|v| lw.labels(v, "labels"))
        .unwrap_or_default();
    let annotations = f
        .take("annotations")
        .map(|v| lw.labels(v, "annotations"))
        .unwrap_or_default();
    if let Some(k) = f.key("namespace") {
        f.take("namespace");
        if crd.namespaced {
            lw.fail(
                Code::UnknownKey,
                k.sp,
                format!("unknown key `namespace` in {owner}"),
                "a namespaced resource deploys to the target's namespace, as the app's other objects do",
            );
        } else {
            lw.fail(
                Code::CustomResourceScope,
                k.sp,
                format!(
                    "{} is cluster-scoped (CRD {}, `scope: Cluster`): it has no namespace",
                    crd.kind, crd.name
                ),
                "remove `namespace:`; the object's name is unique in the whole cluster",
            );
        }
    }
    let schema = &version.schema;
    let allowed: Vec<&str> = schema
        .fields
        .iter()
        .map(|f| f.name.as_str())
        .filter(|n| !SET_BY_PICELI.iter().any(|(k, _)| k == n))
        // The item's own keys (`spec` is the schema's; `namespace` is refused).
        .chain(
            RESOURCE
                .iter()
                .map(|k| k.name)
                .filter(|n| !matches!(*n, "spec" | "namespace")),
        )
        .collect();
    let mut skip = vec!["labels", "annotations", "namespace"];
    for (k, _) in f.rest() {
        if let Some((_, how)) = SET_BY_PICELI.iter().find(|(f, _)| *f == k.text) {
            lw.fail(
                Code::FieldSetByKey,
                k.sp,
                format!("`{}` in {owner} is set by Piceli", k.text),
                how,
            );
            skip.push(&k.text);
        } else if schema.field(&k.text).is_none() {
            let help = unknown_key_help(&k.text, &allowed, &format!("{} takes", crd.kind));
            lw.fail(
                Code::UnknownKey,
                k.sp,
                format!("unknown key `{}` in {owner}", k.text),
                help,
            );
            skip.push(&k.text);
        }
    }
    let before = lw.dynamics.len();
    let fields = match &item.body {
        Some(Value::Map(m)) => {
            lw.bare_names = true;
            let block = lw.block_map::<&Node>(m, Within::Object(schema), &owner, &skip);
            lw.bare_names = false;
            block
        }
        _ => Block::new(lw.loc(name_sp(item), owner.clone()), Vec::new()),
    };
    // Every value written: checked now, against the borrowed schema. A Rust expression among them: the
    // model keeps the schema, and `piceli_core::validate` checks the object (again when the binary runs,
    // once the value is known).
    let dynamic = lw.dynamics.len() > before;
    if !dynamic {
        let mut out = Vec::new();
        check_object::<&Node>(&fields, schema, &owner, &["metadata"], &mut out);
        for d in out {
            let sp = lw.span_at(d.at);
            lw.fail(d.code, sp, d.message, d.help);
        }
    }
    Some(CustomObject {
        name,
        api_version: format!("{}/{}", crd.group, version.name),
        kind: crd.kind.clone(),
        crd: crd.name.clone(),
        namespaced: crd.namespaced,
        labels,
        annotations,
        fields,
        schema: dynamic.then(|| version.schema.clone()),
        shortcut: None,
    })
}

fn name_sp(item: &Item) -> crate::ast::Sp {
    item.name.as_ref().map(|n| n.sp).unwrap_or(item.keyword.sp)
}
