//! Lowering ConfigMaps, Secrets and PersistentVolumeClaims.

use super::blocks::PVC_OWNED;
use super::keys::{self, Key, Reading, annotations, labels};
use super::{DynamicKind, Fields, Lower};
use crate::ast::{Item, Sp, Value};
use piceli_core::Code;
use piceli_core::model::*;
use piceli_core::spanned::Spanned;

pub(super) fn config_map(lw: &mut Lower, item: &Item) {
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let owner = format!("config_map {}", name.v);
    let mut c = ConfigMap {
        name,
        ..ConfigMap::default()
    };
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    let long_form = f.key("data").is_some();
    let Some(mut data) = data_fields(lw, &mut f, &owner) else {
        lw.app.config_maps.push(c);
        return;
    };
    if long_form {
        (c.labels, c.annotations) = lw.meta(&mut f, &owner);
        f.finish_keys(lw, super::keys::CONFIG_MAP);
    }
    for (k, v) in data.all() {
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

/// The data entries of a ConfigMap or Secret: under `data:` when the body has it (then the body's other
/// keys are metadata), else the whole body, where the metadata keys are reserved (`PCL0050`). `None`
/// when `data:` is not a map (reported).
fn data_fields<'a>(lw: &mut Lower, f: &mut Fields<'a>, owner: &str) -> Option<Fields<'a>> {
    if let Some(v) = f.take("data") {
        if !matches!(v, Value::Map(_)) {
            lw.wrong_type(v, "a map of data keys", "data: { KEY: \"value\" }");
            return None;
        }
        return Some(Fields::of(lw, Some(v), format!("{owner} › data")));
    }
    let mut data = Fields::of(lw, None, owner.to_string());
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
        data.push_entry(k, v);
    }
    Some(data)
}

/// Read a file relative to the app crate (where its Cargo.toml is), reporting `PCL0037` when it cannot.
pub(super) fn read_crate_file(lw: &mut Lower, path: &str, at: &Value) -> Option<String> {
    let base = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let full = std::path::Path::new(&base).join(path);
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
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    s.secret_type = f
        .take("type")
        .and_then(|v| lw.str(v, format!("{owner} › type")));
    let long_form = f.key("data").is_some();
    let Some(mut data) = data_fields(lw, &mut f, &owner) else {
        lw.app.secrets.push(s);
        return;
    };
    if long_form {
        (s.labels, s.annotations) = lw.meta(&mut f, &owner);
        f.finish_keys(lw, super::keys::SECRET);
    }
    for (k, v) in data.all() {
        let desc = format!("{owner} › {}", k.text);
        let key = Spanned::new(k.text.clone(), lw.loc(k.sp, desc.clone()));
        let source = match v {
            Value::Call(_) => {
                let Some(call) = lw.call(
                    v,
                    &["from_env", "from_file", "generated"],
                    "from_env(\"API_KEY\")",
                ) else {
                    continue;
                };
                match call.name.text.as_str() {
                    "generated" => {
                        let mut nf = lw.named(call, &desc);
                        let length = match nf.take("length") {
                            Some(l) => lw.int(l, format!("{desc} › length")),
                            None => Some(Spanned::new(
                                32,
                                lw.loc(call.sp, format!("{desc} › length")),
                            )),
                        };
                        nf.finish(lw, &["length"]);
                        let Some(length) = length else { continue };
                        if !(8..=4096).contains(&length.v) {
                            lw.fail(
                                Code::BadBounds,
                                call.sp,
                                format!("a generated secret of length {}", length.v),
                                "use a length from 8 to 4096",
                            );
                        }
                        SecretSource::Generated { length }
                    }
                    kind => {
                        let example = if kind == "from_env" {
                            "from_env(\"API_KEY\")"
                        } else {
                            "from_file(\"secrets/key.pem\")"
                        };
                        let Some(arg) = lw.arg(call, 0, "where the value comes from", example)
                        else {
                            continue;
                        };
                        let Some(text) = lw.str(arg, desc) else {
                            continue;
                        };
                        if kind == "from_env" {
                            if let Err(e) = piceli_core::rules::env_var_name(&text.v) {
                                lw.fail(Code::InvalidEnvName, arg.sp(), e.message, e.help);
                            }
                            SecretSource::Env(text)
                        } else {
                            SecretSource::File(text)
                        }
                    }
                }
            }
            Value::Str(_) | Value::Int(..) | Value::Expr(..) => {
                lw.fail(
                    Code::SecretLiteral,
                    v.sp(),
                    format!("the value of secret key `{}` is written in the source", k.text),
                    "read it when applying instead: `from_env(\"VAR\")`, `from_file(\"path\")` or `generated(length: 32)`",
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
        Some(|lw, r, _, key, v| match v {
            Some(s) => r.item.storage = lw.text(s, format!("{} › {key}", r.owner)),
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
