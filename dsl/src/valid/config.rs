//! Lowering ConfigMaps, Secrets and PersistentVolumeClaims, each read by its key table (a ConfigMap's or
//! Secret's short form makes the body's keys its data).

use super::blocks::PVC_OWNED;
use super::keys::{
    self, ANNOTATIONS_DOC, Key, LABELS_DOC, Reading, annotations, labels, read_meta,
};
use super::{DynamicKind, Fields, Lower};
use crate::ast::{Item, NameTok, Sp, Value};
use piceli_core::Code;
use piceli_core::model::*;
use piceli_core::spanned::Spanned;

/// The key under which a ConfigMap's or Secret's data go when it has metadata (the long form).
const DATA: &str = "data";

/// `config_map NAME { … }` with metadata: its keys and their readers.
pub const CONFIG_MAP: &[Key<Reading<DataRead>>] = &[
    Key::new(
        DATA,
        "the keys and values: strings, numbers, Rust expressions or `file(\"path\")`",
        Some(data_key),
    ),
    Key::new("labels", LABELS_DOC, Some(meta_key)),
    Key::new("annotations", ANNOTATIONS_DOC, Some(meta_key)),
];

/// The type of a Secret, in both forms.
const SECRET_TYPE: Key<Reading<DataRead>> = Key::new(
    "type",
    "the Secret type, e.g. `\"kubernetes.io/tls\"`",
    Some(|lw, r, _, key, v| {
        if let Some(v) = v {
            r.item.secret_type = lw.str(v, format!("{} › {key}", r.owner));
        }
    }),
);

/// `secret NAME { … }` with metadata or a type: its keys and their readers.
pub const SECRET: &[Key<Reading<DataRead>>] = &[
    SECRET_TYPE,
    Key::new(
        DATA,
        "the keys and where their values come from: `from_env(\"VAR\")`, `from_file(\"path\")`, `generate(random(32))`, `generate(tls_self_signed(…))`, `generate(tls_signed_by(…))`, `generate(template(\"…{key}…\"))`",
        Some(data_key),
    ),
    Key::new("labels", LABELS_DOC, Some(meta_key)),
    Key::new("annotations", ANNOTATIONS_DOC, Some(meta_key)),
];

/// A ConfigMap or Secret being read: its type (a Secret's), and its data entries (`bad`: `data:` is not
/// a map, reported; nothing else of the item is read then).
#[derive(Default)]
pub struct DataRead {
    secret_type: Option<Spanned<String>>,
    data: Vec<(NameTok, Value)>,
    bad: bool,
}

/// `data: { … }`: its entries (a key given twice is reported here, as the map is read).
fn data_key(
    lw: &mut Lower,
    r: &mut Reading<DataRead>,
    _: &mut Fields,
    key: &'static str,
    v: Option<&Value>,
) {
    let Some(v) = v else { return };
    if !matches!(v, Value::Map(_)) {
        lw.wrong_type(v, "a map of data keys", "data: { KEY: \"value\" }");
        r.item.bad = true;
        return;
    }
    let mut data = Fields::of(lw, Some(v), format!("{} › {key}", r.owner));
    r.item.data = data
        .all()
        .into_iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
}

/// `labels:` and `annotations:`, unless `data:` is not a map.
fn meta_key(
    lw: &mut Lower,
    r: &mut Reading<DataRead>,
    f: &mut Fields,
    key: &'static str,
    v: Option<&Value>,
) {
    if !r.item.bad {
        read_meta(lw, r, f, key, v);
    }
}

/// Read a ConfigMap's or Secret's keys: by `table` in the long form (with `data:`), and then every key not
/// read is unknown; else the body's keys are its data, where the metadata keys are reserved (`PCL0050`)
/// and only the keys of `short` are read. `false` when `data:` is not a map (reported).
fn read_data(
    lw: &mut Lower,
    mut f: Fields,
    r: &mut Reading<DataRead>,
    table: &[Key<Reading<DataRead>>],
    short: &[Key<Reading<DataRead>>],
) -> bool {
    if f.key(DATA).is_some() {
        keys::read(lw, &mut f, table, r);
        if r.item.bad {
            return false;
        }
        f.finish_keys(lw, table);
        return true;
    }
    keys::read(lw, &mut f, short, r);
    let owner = &r.owner;
    for (k, v) in f.rest() {
        if k.text == "labels" || k.text == "annotations" {
            lw.fail(
                Code::ReservedDataKey,
                k.sp,
                format!("`{}` in {owner} would be a data key", k.text),
                format!(
                    "to give {}, put the data under `data: {{ … }}`: `{} {{ {}: {{ … }}, data: {{ KEY: … }} }}`",
                    k.text,
                    owner,
                    k.text
                ),
            );
            continue;
        }
        r.item.data.push((k.clone(), v.clone()));
    }
    true
}

pub(super) fn config_map(lw: &mut Lower, item: &Item) {
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let owner = format!("config_map {}", name.v);
    let mut c = ConfigMap {
        name,
        ..ConfigMap::default()
    };
    let f = Fields::of(lw, item.body.as_ref(), owner.clone());
    let mut r = Reading::<DataRead>::new(owner.clone());
    if !read_data(lw, f, &mut r, CONFIG_MAP, &[]) {
        lw.app.config_maps.push(c);
        return;
    }
    (c.labels, c.annotations) = (r.labels, r.annotations);
    for (k, v) in &r.item.data {
        let desc = format!("{owner} › {}", k.text);
        let key = Spanned::new(k.text.clone(), lw.loc(k.sp, desc.clone()));
        let value = match v {
            Value::Call(_) => {
                let Some(call) = lw.call(v, &["file"], "file(\"conf/app.toml\")") else {
                    continue;
                };
                let Some(arg) = lw.arg(
                    call,
                    0,
                    "a path relative to the crate",
                    "file(\"conf/app.toml\")",
                ) else {
                    continue;
                };
                let Some(path) = lw.str(arg, format!("{desc} › file")) else {
                    continue;
                };
                let Some(text) = read_crate_file(lw, &path.v, arg) else {
                    continue;
                };
                let at = lw.loc(arg.sp(), format!("{desc} › contents"));
                lw.dynamic(at, DynamicKind::File(path.v.clone()));
                let _ = text;
                ConfigValue::File {
                    path,
                    contents: Spanned::new(String::new(), at),
                }
            }
            _ => match lw.text(v, desc) {
                Some(s) => ConfigValue::Literal(s),
                None => continue,
            },
        };
        c.data.push((key, value));
    }
    lw.app.config_maps.push(c);
}

/// The app crate's directory (where its Cargo.toml is), which the paths in `app!` are relative to.
pub(super) fn crate_dir() -> std::path::PathBuf {
    crate::fragment_paths::crate_dir().unwrap_or_else(|| ".".into())
}

/// Read a file relative to the app crate (where its Cargo.toml is), reporting `PCL0037` when it cannot.
pub(super) fn read_crate_file(lw: &mut Lower, path: &str, at: &Value) -> Option<String> {
    let full = crate_dir().join(path);
    match std::fs::read_to_string(&full) {
        Ok(text) => Some(text),
        Err(e) => {
            lw.fail(
                Code::IncludeUnreadable,
                at.sp(),
                format!("cannot read `{path}`: {e}"),
                "paths are relative to the directory of this crate's Cargo.toml (CARGO_MANIFEST_DIR)".to_string(),
            );
            None
        }
    }
}

pub(super) fn secret(lw: &mut Lower, item: &Item) {
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let owner = format!("secret {}", name.v);
    let mut s = Secret {
        name,
        ..Secret::default()
    };
    let f = Fields::of(lw, item.body.as_ref(), owner.clone());
    let mut r = Reading::<DataRead>::new(owner.clone());
    let read = read_data(lw, f, &mut r, SECRET, &[SECRET_TYPE]);
    s.secret_type = r.item.secret_type.take();
    if !read {
        lw.app.secrets.push(s);
        return;
    }
    (s.labels, s.annotations) = (r.labels, r.annotations);
    for (k, v) in &r.item.data {
        let desc = format!("{owner} › {}", k.text);
        let key = Spanned::new(k.text.clone(), lw.loc(k.sp, desc.clone()));
        let source = match v {
            Value::Call(_) => match super::secret_sources::source(lw, v, &key, &desc) {
                Some(source) => source,
                None => continue,
            },
            Value::Str(_) | Value::Int(..) | Value::Expr(..) => {
                lw.fail(
                    Code::SecretLiteral,
                    v.sp(),
                    format!("the value of secret key `{}` is written in the source", k.text),
                    "read it when applying instead: `from_env(\"VAR\")`, `from_file(\"path\")` or `generate(random(32))`",
                );
                // The key stays declared (the build fails, so this source is never used): references to
                // it add no follow-on "no key" error.
                SecretSource::Generated {
                    length: Spanned::new(32, key.at),
                }
            }
            other => {
                lw.wrong_type(other, "a secret source", "from_env(\"API_KEY\")");
                SecretSource::Generated {
                    length: Spanned::new(32, key.at),
                }
            }
        };
        s.data.push((key, source));
    }
    lw.app.secrets.push(s);
}

/// `pvc NAME { … }`: its keys and their readers.
pub const PVC: &[Key<Reading<Claim>>] = &[
    Key::new(
        "storage",
        "the size requested, e.g. `\"5Gi\"`",
        Some(|lw, r, f, key, v| match v {
            Some(s) => r.item.storage = lw.text(s, format!("{} › {key}", r.owner)),
            // `stroage: "5Gi"`: the unknown-key error offers `storage`; "no storage size" would repeat it.
            None if f.misspells(key, |k| super::keys::find(PVC, k).is_some()) => {}
            None => {
                if let Some(sp) = r.item.sp {
                    lw.fail(
                        Code::MissingKey,
                        sp,
                        format!("{} has no storage size", r.owner),
                        "add `storage: \"1Gi\"`",
                    );
                }
            }
        }),
    ),
    Key::new(
        "access",
        "access modes, e.g. `[\"ReadWriteOnce\"]`",
        Some(|lw, r, _, key, v| {
            if let Some(a) = v {
                r.item.access_modes = lw.str_list(a, &format!("{} › {key}", r.owner));
            }
        }),
    ),
    Key::new(
        "class",
        "the StorageClass name",
        Some(|lw, r, _, key, v| {
            if let Some(c) = v {
                r.item.storage_class = lw.str(c, format!("{} › {key}", r.owner));
            }
        }),
    ),
    labels(),
    annotations(),
    Key::new(
        "spec",
        "a block of PersistentVolumeClaimSpec fields",
        Some(|lw, r, f, key, v| {
            if let Some(v) = v {
                let root = piceli_core::schema::PERSISTENT_VOLUME_CLAIM_SPEC;
                r.item.spec = lw.block_of(v, f, key, root, PVC_OWNED, &r.owner);
            }
        }),
    ),
];

/// A PersistentVolumeClaim's own fields, as read.
#[derive(Default)]
pub struct Claim {
    /// The item's name, where a missing storage size is reported.
    sp: Option<Sp>,
    storage: Option<Spanned<String>>,
    access_modes: Vec<Spanned<String>>,
    storage_class: Option<Spanned<String>>,
    spec: Block,
}

pub(super) fn pvc(lw: &mut Lower, item: &Item) {
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let owner = format!("pvc {}", name.v);
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    let mut r = Reading::<Claim>::new(owner);
    r.item.sp = Some(item.name.as_ref().map(|n| n.sp).unwrap_or(item.keyword.sp));
    keys::read(lw, &mut f, PVC, &mut r);
    f.finish_keys(lw, PVC);
    let c = r.item;
    if let Some(storage) = c.storage {
        lw.app.pvcs.push(Pvc {
            name,
            storage,
            access_modes: c.access_modes,
            storage_class: c.storage_class,
            labels: r.labels,
            annotations: r.annotations,
            spec: c.spec,
        });
    }
}
