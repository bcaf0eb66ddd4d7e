//! A container's keys and their readers, in the order they are read: each entry of `containers:` and
//! `init_containers:`, and the single container written at the top of a workload (from the workload's own
//! body). The values themselves are lowered in `container.rs`.

use super::blocks::CONTAINER_OWNED;
use super::container::{env, env_from, mounts, ports, probe, resources, text_list};
use super::keys::{self, Key, Reading};
use super::{Fields, Lower};
use crate::ast::{Sp, Value};
use piceli_core::Code;
use piceli_core::model::*;
use piceli_core::schema;
use piceli_core::spanned::Spanned;

/// The keys of one container: at the top of a workload with one container, or in each entry of
/// `containers:` and `init_containers:`.
pub const CONTAINER: &[Key<Reading<ContainerRead>>] = &[
    Key::new(
        "image",
        "the image, pinned by digest; `unpinned(\"nginx:1.27\")` opts out, `build(package: …)` builds it from the workspace",
        Some(image),
    ),
    Key::new(
        "command",
        "the entrypoint (`command`), a list of strings",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v {
                let c = &mut r.item;
                c.container.command =
                    text_list(lw, v, &r.owner, &c.workload, &c.container.name.v, key);
            }
        }),
    ),
    Key::new(
        "args",
        "its arguments (`args`), a list of strings",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v {
                let c = &mut r.item;
                c.container.args =
                    text_list(lw, v, &r.owner, &c.workload, &c.container.name.v, key);
            }
        }),
    ),
    Key::new(
        "pull_policy",
        "`imagePullPolicy`: `\"IfNotPresent\"`, `\"Always\"` or `\"Never\"`",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v {
                r.item.container.pull_policy = lw.str(v, format!("{} › {key}", r.owner));
            }
        }),
    ),
    Key::new(
        "env",
        "environment: literals, `config(MAP.KEY)`, `secret(SECRET.KEY)`, `field(\"status.podIP\")`, Rust expressions",
        Some(|lw, r, _, key, v| match v {
            Some(Value::Expr(e, sp)) => {
                let at = lw.loc(*sp, format!("{} › {key}", r.owner));
                lw.dynamic(at, super::DynamicKind::Env(e.clone()));
                r.item.container.env_expr = Some(at);
            }
            Some(v) => r.item.container.env = env(lw, v, &r.owner),
            None => {}
        }),
    ),
    Key::new(
        "env_from",
        "`[config(NAME), secret(NAME)]`: every key of a ConfigMap or Secret (`envFrom`)",
        Some(|lw, r, _, _, v| {
            if let Some(v) = v {
                r.item.container.env_from = env_from(lw, v, &r.owner);
            }
        }),
    ),
    Key::new(
        "ports",
        "container ports: named `{ http: 8000, dns: port(53, protocol: \"UDP\") }`, or `[8000, 9090]` without names",
        Some(|lw, r, _, _, v| {
            if let Some(v) = v {
                r.item.container.ports = ports(lw, v, &r.owner);
            }
        }),
    ),
    Key::new(
        "resources",
        "`{ cpu: \"250m\", memory: \"256Mi\" }` (requests), or `{ requests: { … }, limits: { … } }`",
        Some(|lw, r, _, _, v| {
            if let Some(v) = v {
                r.item.container.resources = resources(lw, v, &r.owner);
            }
        }),
    ),
    Key::new(
        "ready",
        "readiness probe: `http_get(PATH, port: …)`, `tcp(port: …)` or `exec([…])`, with the probe options",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v {
                r.item.container.readiness = probe(lw, v, &format!("{} › {key}", r.owner));
            }
        }),
    ),
    Key::new(
        "live",
        "liveness probe, in the form of `ready:`",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v {
                r.item.container.liveness = probe(lw, v, &format!("{} › {key}", r.owner));
            }
        }),
    ),
    Key::new(
        "startup",
        "startup probe, in the form of `ready:`",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v {
                r.item.container.startup = probe(lw, v, &format!("{} › {key}", r.owner));
            }
        }),
    ),
    Key::new(
        "mounts",
        "`{ \"/path\": VOLUME }`, or `volume(VOLUME, read_only: true, sub_path: \"file\")`",
        Some(|lw, r, _, _, v| {
            if let Some(v) = v {
                r.item.container.mounts = mounts(lw, v, &r.owner);
            }
        }),
    ),
    Key::new(
        "container",
        "a block of Container fields (schema-checked, merged under the keys above)",
        Some(|lw, r, f, key, v| {
            if let Some(v) = v {
                let root = schema::CONTAINER;
                r.item.container.block = lw.block_of(v, f, key, root, CONTAINER_OWNED, &r.owner);
            }
        }),
    ),
];

/// A container being read: the container, whether it has an image, where its name is, and its workload.
#[derive(Default)]
pub struct ContainerRead {
    container: Container,
    has_image: bool,
    name_sp: Option<Sp>,
    workload: String,
}

/// `image:` (required): pinned by digest, `unpinned(…)`, or `build(…)`.
fn image(
    lw: &mut Lower,
    r: &mut Reading<ContainerRead>,
    f: &mut Fields,
    key: &'static str,
    v: Option<&Value>,
) {
    let owner = &r.owner;
    let c = &mut r.item.container;
    match v {
        Some(Value::Call(call)) if call.name.text == "unpinned" => {
            c.unpinned = true;
            lw.max_args(call, 1, "unpinned(\"nginx:1.27\")");
            if let Some(v) = lw.arg(call, 0, "the image", "unpinned(\"nginx:1.27\")")
                && let Some(s) = lw.str(v, format!("{owner} › {key}"))
            {
                c.image = s;
            }
        }
        Some(Value::Call(call)) if call.name.text == "build" => {
            c.image = super::build::build(lw, call, owner, false);
        }
        Some(v) => {
            if let Some(s) = lw.str(v, format!("{owner} › {key}")) {
                c.image = s;
            }
        }
        None => {
            r.item.has_image = false;
            // A misspelled `image` is reported once, as the unknown key with its did-you-mean.
            let known = |k: &str| {
                keys::find(super::workload_keys::WORKLOAD, k).is_some()
                    || keys::find(CONTAINER, k).is_some()
            };
            if !f.misspells(key, known)
                && let Some(sp) = r.item.name_sp
            {
                lw.fail(
                    Code::MissingKey,
                    sp,
                    format!("{owner} has no image"),
                    "add `image: \"registry/repo:tag@sha256:…\"`",
                )
            }
        }
    }
}

/// `containers: { NAME: { … }, … }` (and `init_containers:`): each entry read by [`CONTAINER`].
pub(super) fn containers(lw: &mut Lower, v: &Value, owner: &str, workload: &str) -> Vec<Container> {
    let mut out = Vec::new();
    let mut f = Fields::of(lw, Some(v), format!("{owner} › containers"));
    for (k, body) in f.all() {
        let desc = format!("{owner} › container {}", k.text);
        let name = Spanned::new(k.text.clone(), lw.loc(k.sp, desc.clone()));
        let mut cf = Fields::of(lw, Some(body), desc.clone());
        let c = container_fields(lw, &mut cf, name, k.sp, &desc, workload);
        cf.finish_keys(lw, CONTAINER);
        out.extend(c);
    }
    out
}

/// One container's keys; `None` (after reporting it) when it has no image.
pub(super) fn container_fields(
    lw: &mut Lower,
    f: &mut Fields,
    name: Spanned<String>,
    name_sp: Sp,
    owner: &str,
    workload: &str,
) -> Option<Container> {
    let mut r = Reading::<ContainerRead>::new(owner.to_string());
    r.item = ContainerRead {
        container: Container {
            name,
            ..Container::default()
        },
        has_image: true,
        name_sp: Some(name_sp),
        workload: workload.to_string(),
    };
    keys::read(lw, f, CONTAINER, &mut r);
    r.item.has_image.then_some(r.item.container)
}
