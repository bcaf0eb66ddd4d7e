//! Lowering cleaned objects to `app!` items: first-class items and keys where the DSL models the object,
//! schema-checked blocks for the rest of its fields, and `include` for kinds (or shapes) it does not model.
//!
//! The order matters: Secrets, ConfigMaps, ServiceAccounts and roles first (workloads' `env:` and bindings
//! name them), then workloads (Services, autoscalers and budgets find theirs by selector or reference),
//! then what refers to them.

mod admit;
mod config;
mod custom;
mod naming;
mod netpol;
mod network;
mod pod;
mod policy;
mod workload;

use crate::clean;
use crate::convert::{self, Conversion};
use crate::dsl::{Dsl, Item, Module};
use crate::error::Warning;
use crate::read::Source;
use piceli_core::Code;
use piceli_core::include::CLUSTER_SCOPED;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// What an import is asked to produce.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The app's name (`--app`); default: the manifests' `app.kubernetes.io/part-of` or shared
    /// `app.kubernetes.io/name` label, else the namespace.
    pub app: Option<String>,
    /// The target namespace (`--namespace`); default: the namespace most objects name, else `default`.
    pub namespace: Option<String>,
    /// `target NAME = VALUE` of the generated module; default: `local = local(namespace: NS)`.
    pub target: Option<(String, String)>,
    /// Where included objects are written, relative to the crate (`k8s/imported.json`).
    pub include_path: String,
    /// `--secrets`: how Secrets are imported (their values never reach the source either way).
    pub secrets: SecretMode,
    /// Images `--pin` could not resolve, with why (they stay `unpinned("…")`, the reason in a comment).
    pub pin_failures: std::collections::BTreeMap<String, String>,
    /// `--crds`: the CRD files whose kinds become `resource` items (objects of other kinds stay included).
    pub crds: Vec<crate::crds::CrdFile>,
    /// The path the module's `crds "…";` names (relative to the crate): `crds/` when the files are copied
    /// into a crate; `None`: each file used, as its path was given.
    pub crds_path: Option<String>,
}

/// How `import` writes the Secrets it reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SecretMode {
    /// `secret NAME { KEY: from_env("NAME_KEY") }`, the variables listed in `.env.example` (the default).
    #[default]
    Env,
    /// `external secret NAME;`: made outside the app (External Secrets, a vault operator, by hand).
    External,
}

/// The result of lowering.
#[derive(Debug, Clone, Default)]
pub struct Lowered {
    /// The module to print.
    pub module: Module,
    /// Environment variables the Secrets read (`from_env`), with what each holds.
    pub env: Vec<(String, String)>,
    /// Objects kept as they are (`include json(…)`).
    pub includes: Vec<Value>,
    /// What was changed or left out.
    pub warnings: Vec<Warning>,
    /// Images not pinned by digest (`Deployment web: nginx:1.27`), imported as `unpinned("…")`.
    pub unpinned: Vec<String>,
    /// Cluster-made objects skipped, with why (`ReplicaSet web-abc: a workload owns it`).
    pub skipped: Vec<String>,
    /// The `--crds` files (indices into [`Options::crds`]) whose kinds became `resource` items.
    pub crd_files: Vec<usize>,
}

/// A workload already lowered: its kind, name and pod labels (Services and budgets select by them).
pub(crate) struct WorkloadRef {
    pub kind: String,
    pub name: String,
    pub pod_labels: Map<String, Value>,
    /// Its first-class container ports, `(name, number)`.
    pub ports: Vec<(String, i64)>,
    /// Kept as it is in the include file: items refer to it by its own selector (`pod_labels`), which a
    /// Service's selector must then equal.
    pub included: bool,
}

/// The state of one lowering.
pub(crate) struct Cx {
    pub app: String,
    pub namespace: String,
    pub out: Lowered,
    pub workloads: Vec<WorkloadRef>,
    pub secrets: BTreeSet<String>,
    /// Every Secret of the input, first-class or not (a Secret left to the include file is not one
    /// `tls:` can name; one the input lacks is declared `external`).
    pub input_secrets: BTreeSet<String>,
    pub config_maps: BTreeSet<String>,
    /// PersistentVolumeClaims lowered first-class (pod volumes may name them).
    pub pvcs: BTreeSet<String>,
    pub service_accounts: BTreeSet<String>,
    pub roles: BTreeSet<(bool, String)>,
    /// `--secrets external`.
    pub secrets_external: bool,
    /// The first-class container ports of the workload being lowered.
    pub container_ports: Vec<(String, i64)>,
    /// The first-class pod volumes of the workload being lowered (first-class mounts name them).
    pub pod_volumes: Vec<String>,
    /// Services lowered first-class, with their first-class ports `(name, port)` (Ingresses route to them).
    pub services: std::collections::BTreeMap<String, Vec<(String, i64)>>,
    /// [`Options::pin_failures`].
    pub pin_failures: std::collections::BTreeMap<String, String>,
    /// Services Ingresses route to that the input lacks, declared `external service NAME;`.
    pub external_services: BTreeSet<String>,
    /// Gateways the input lacks that imported routes attach to: declared `external gateway NAME;` once.
    pub external_gateways: BTreeSet<String>,
    /// Items an item needs declared before it (`external service NAME;` of an Ingress).
    pub pending: Vec<Item>,
}

/// Records the apps/v1 and batch/v1 workloads left to the include file, as `app!` will know them (its
/// `include json(…)` is read at compile time), so that Services, budgets and autoscalers of them can still
/// be first-class.
fn included_workloads(cx: &mut Cx, objects: &[Value], lowered: &[bool]) {
    for (o, _) in objects.iter().zip(lowered).filter(|(_, done)| !**done) {
        let Some(w) = piceli_core::include::included_workload(o, piceli_core::Loc::NONE) else {
            continue;
        };
        cx.workloads.push(WorkloadRef {
            kind: w.workload.kind.kind().to_string(),
            name: w.workload.name.v.clone(),
            pod_labels: w
                .selector
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect(),
            ports: w
                .workload
                .containers
                .iter()
                .flat_map(|c| &c.ports)
                .map(|p| (p.name.v.clone(), p.number.v))
                .collect(),
            included: true,
        });
    }
}

/// Labels Piceli sets itself: `app!` rejects them (PCL0021), render adds them.
pub(crate) const RESERVED_LABELS: &[&str] = &piceli_core::rules::labels::MANAGED_LABELS;

/// Lower every source object.
pub fn lower(sources: Vec<Source>, options: &Options) -> Lowered {
    let mut objects = Vec::new();
    let mut out = Lowered::default();
    let mut seen = BTreeSet::new();
    // Secrets and ConfigMaps something else makes: `external` when a workload refers to them.
    let mut made_elsewhere = Vec::new();
    // The `// piceli:` comment of each object whose API version was converted (or is no longer served).
    let mut notes: std::collections::BTreeMap<String, String> = Default::default();
    let by_hand = clean::selectorless_services(sources.iter().map(|s| &s.object));
    for s in sources {
        let mut o = s.object;
        let what = describe(&o);
        if let Some(why) = clean::cluster_made(&o).filter(|_| !clean::endpoints_of(&o, &by_hand)) {
            if matches!(o["kind"].as_str(), Some("Secret" | "ConfigMap"))
                && config::maker(&o).is_some()
            {
                made_elsewhere.push((o, format!("{what}: {why}")));
            } else {
                out.skipped.push(format!("{what}: {why}"));
            }
            continue;
        }
        clean::clean(&mut o);
        let conversion = convert::to_served(&mut o);
        let key = (
            o["apiVersion"].as_str().unwrap_or_default().to_string(),
            o["kind"].as_str().unwrap_or_default().to_string(),
            o["metadata"]["namespace"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            o["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        );
        if !seen.insert(key.clone()) {
            out.warnings.push(Warning::new(
                Code::ImportDuplicate,
                &what,
                format!("read again at {}; the first one is imported", s.origin),
            ));
            continue;
        }
        match conversion {
            Some(c @ Conversion::Converted { .. }) => {
                let warning = Warning::new(Code::ImportConvertedVersion, &what, c.message());
                notes.insert(describe(&o), format!("piceli: {}", warning.line()));
                out.warnings.push(warning);
            }
            // `app!` refuses an included object that no 1.33 cluster serves (PCL0058): left out, its JSON
            // kept in a comment, as for names no cluster accepts.
            Some(c @ Conversion::Kept { .. }) => {
                let json = serde_json::to_string(&o).unwrap_or_default();
                out.warnings.push(Warning::new(
                    Code::ImportRemovedVersion,
                    &what,
                    format!(
                        "{}; left out (its JSON is in a comment at the end)",
                        c.message()
                    ),
                ));
                out.module.trailer.push(format!(
                    "piceli: PCL0217 {what} left out, {}:\n{json}",
                    c.message()
                ));
                continue;
            }
            None => {}
        }
        objects.push(o);
    }
    let (secrets, config_maps) = referenced(&objects);
    for (o, skipped) in made_elsewhere {
        let name = o["metadata"]["name"].as_str().unwrap_or_default();
        let used = match o["kind"].as_str() {
            Some("Secret") => secrets.contains(name),
            _ => config_maps.contains(name),
        };
        if used {
            objects.push(o);
        } else {
            out.skipped.push(skipped);
        }
    }
    let namespace = options
        .namespace
        .clone()
        .unwrap_or_else(|| most_common_namespace(&objects));
    let app = options
        .app
        .clone()
        .unwrap_or_else(|| naming::app_name(&objects, &namespace));
    let mut cx = Cx {
        app: app.clone(),
        namespace: namespace.clone(),
        out,
        workloads: Vec::new(),
        secrets: BTreeSet::new(),
        input_secrets: BTreeSet::new(),
        config_maps: BTreeSet::new(),
        pvcs: BTreeSet::new(),
        service_accounts: BTreeSet::new(),
        roles: BTreeSet::new(),
        secrets_external: options.secrets == SecretMode::External,
        container_ports: Vec::new(),
        pod_volumes: Vec::new(),
        services: std::collections::BTreeMap::new(),
        pin_failures: options.pin_failures.clone(),
        external_services: BTreeSet::new(),
        external_gateways: BTreeSet::new(),
        pending: Vec::new(),
    };
    // Objects no cluster accepts are left out, and objects of other namespaces warned, before lowering.
    let kept = admit::admit(&mut cx, objects);
    cx.input_secrets = kept
        .iter()
        .filter(|o| o["kind"] == "Secret")
        .filter_map(|o| o["metadata"]["name"].as_str().map(String::from))
        .collect();
    // Pass order: what workloads and bindings name, then workloads, then what selects or scales them.
    let passes: &[&[&str]] = &[
        &[
            "Secret",
            "ServiceAccount",
            "ConfigMap",
            "PersistentVolumeClaim",
            "Role",
            "ClusterRole",
        ],
        &["Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"],
        &[
            "Service",
            "RoleBinding",
            "ClusterRoleBinding",
            "HorizontalPodAutoscaler",
            "PodDisruptionBudget",
        ],
        &["Ingress", "NetworkPolicy"],
    ];
    let mut items: Vec<(usize, Item)> = Vec::new();
    let mut lowered = vec![false; kept.len()];
    for (n, pass) in passes.iter().enumerate() {
        if n == 2 {
            // Workloads kept as they are are still known to what selects or scales them.
            included_workloads(&mut cx, &kept, &lowered);
        }
        for (i, o) in kept.iter().enumerate() {
            let kind = o["kind"].as_str().unwrap_or_default();
            if !pass.contains(&kind) {
                continue;
            }
            let lowered_one = lower_one(&mut cx, o, kind);
            items.extend(cx.pending.drain(..).map(|p| (i, p)));
            if let Some(mut item) = lowered_one {
                if let Some(ns) = o["metadata"]["namespace"].as_str()
                    && ns != namespace
                    && !CLUSTER_SCOPED.contains(&kind)
                {
                    item.comments.push(format!(
                        "piceli: PCL0183 was in namespace `{ns}`, now in the target's `{namespace}`"
                    ));
                }
                if let Some(note) = notes.get(&describe(o)) {
                    item.comments.push(note.clone());
                }
                items.push((i, item));
                lowered[i] = true;
            }
        }
    }
    // Custom resources of the `--crds` kinds, once what they name is lowered.
    let custom = custom::lower(&mut cx, &kept, &mut lowered, &options.crds);
    for (i, mut item) in custom.items {
        if item.keyword.starts_with("resource ")
            && let Some(ns) = kept[i]["metadata"]["namespace"].as_str()
            && ns != namespace
        {
            item.comments.push(format!(
                "piceli: PCL0183 was in namespace `{ns}`, now in the target's `{namespace}`"
            ));
        }
        items.push((i, item));
    }
    items.sort_by_key(|(i, _)| *i);
    cx.out.module.items = items.into_iter().map(|(_, item)| item).collect();
    if !custom.files.is_empty() {
        let paths: Vec<String> = match &options.crds_path {
            Some(p) => vec![p.clone()],
            None => custom
                .files
                .iter()
                .map(|&f| options.crds[f].path.display().to_string())
                .collect(),
        };
        let crds: Vec<Item> = paths
            .into_iter()
            .map(|p| {
                let mut c = Item::new(&format!("crds {p:?}"), "");
                c.comments.push(
                    "piceli: the CustomResourceDefinitions of the `resource` items (`--crds`)"
                        .into(),
                );
                c
            })
            .collect();
        cx.out.module.items.splice(0..0, crds);
        cx.out.crd_files = custom.files.into_iter().collect();
    }
    let mut included_notes: Vec<String> = custom
        .kept
        .into_iter()
        .map(|(what, why)| format!("piceli: {what} stays here, not a `resource` item: {why}"))
        .collect();
    for (i, o) in kept.into_iter().enumerate() {
        if lowered[i] {
            continue;
        }
        if o["kind"] == "Namespace" && o["metadata"]["name"] == namespace.as_str() {
            cx.out.skipped.push(format!(
                "Namespace {namespace}: the target's namespace, rendered by Piceli"
            ));
            continue;
        }
        if let Some(note) = notes.remove(&describe(&o)) {
            included_notes.push(note);
        }
        // Imported into the target's namespace (PCL0183), as the first-class items are: render gives an
        // included object without one the target's.
        let mut o = o;
        if piceli_core::include::own_namespace(&o).is_some_and(|ns| ns != namespace)
            && let Some(meta) = o["metadata"].as_object_mut()
        {
            meta.shift_remove("namespace");
        }
        cx.out.includes.push(o);
    }
    if !cx.out.includes.is_empty() {
        let mut inc = Item::new("include", "");
        let kinds: BTreeSet<String> = cx.out.includes.iter().map(describe).collect();
        inc.comments.push(format!(
            "piceli: kept as they are (no first-class item fits): {}",
            kinds.into_iter().collect::<Vec<_>>().join(", ")
        ));
        inc.comments.extend(included_notes);
        let unpinned: Vec<String> = cx
            .out
            .includes
            .iter()
            .flat_map(|o| {
                piceli_core::include::unpinned_images(o)
                    .into_iter()
                    .map(move |image| format!("{} ({image})", describe(o)))
            })
            .collect();
        if !unpinned.is_empty() {
            inc.comments.push(format!(
                "piceli: not pinned by digest: {}; pin them in the file to drop `images: unpinned`",
                unpinned.join(", ")
            ));
            inc.entry("images", Dsl::Name("unpinned".into()));
        }
        inc.keyword = format!("include json({:?})", options.include_path);
        cx.out.module.items.push(inc);
    }
    cx.out.module.app = app;
    cx.out.module.target = options.target.clone().unwrap_or_else(|| {
        (
            "local".to_string(),
            format!("local(namespace: {namespace:?})"),
        )
    });
    cx.out
}

fn lower_one(cx: &mut Cx, o: &Value, kind: &str) -> Option<Item> {
    let api = o["apiVersion"].as_str().unwrap_or_default();
    match (api, kind) {
        ("apps/v1", "Deployment" | "StatefulSet" | "DaemonSet")
        | ("batch/v1", "Job" | "CronJob") => workload::workload(cx, o),
        ("v1", "Service") => workload::service(cx, o),
        ("v1", "ConfigMap") => config::config_map(cx, o),
        ("v1", "Secret") => config::secret(cx, o),
        ("v1", "PersistentVolumeClaim") => config::pvc(cx, o),
        ("v1", "ServiceAccount") => policy::service_account(cx, o),
        ("rbac.authorization.k8s.io/v1", "Role" | "ClusterRole") => policy::role(cx, o),
        ("rbac.authorization.k8s.io/v1", "RoleBinding" | "ClusterRoleBinding") => {
            policy::role_binding(cx, o)
        }
        ("autoscaling/v2", "HorizontalPodAutoscaler") => policy::autoscaler(cx, o),
        ("policy/v1", "PodDisruptionBudget") => policy::budget(cx, o),
        ("networking.k8s.io/v1", "Ingress") => network::ingress(cx, o),
        ("networking.k8s.io/v1", "NetworkPolicy") => netpol::network_policy(cx, o),
        _ => None,
    }
}

/// `Deployment web`.
pub fn describe(o: &Value) -> String {
    format!(
        "{} {}",
        o["kind"].as_str().unwrap_or("?"),
        o["metadata"]["name"].as_str().unwrap_or("?")
    )
}

/// The Secrets and ConfigMaps the workloads' pod templates name (env, `envFrom`, volumes, projected
/// volumes).
fn referenced(objects: &[Value]) -> (BTreeSet<String>, BTreeSet<String>) {
    fn walk(v: &Value, secrets: &mut BTreeSet<String>, config_maps: &mut BTreeSet<String>) {
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    let name = v["name"].as_str().or(v["secretName"].as_str());
                    match (k.as_str(), name) {
                        ("secretKeyRef" | "secretRef" | "secret", Some(n)) => {
                            secrets.insert(n.to_string());
                        }
                        ("configMapKeyRef" | "configMapRef" | "configMap", Some(n)) => {
                            config_maps.insert(n.to_string());
                        }
                        _ => {}
                    }
                    walk(v, secrets, config_maps);
                }
            }
            Value::Array(items) => items.iter().for_each(|i| walk(i, secrets, config_maps)),
            _ => {}
        }
    }
    let (mut secrets, mut config_maps) = (BTreeSet::new(), BTreeSet::new());
    let workloads = ["Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"];
    for o in objects
        .iter()
        .filter(|o| workloads.contains(&o["kind"].as_str().unwrap_or_default()))
    {
        walk(&o["spec"], &mut secrets, &mut config_maps);
    }
    (secrets, config_maps)
}

fn most_common_namespace(objects: &[Value]) -> String {
    // Counted in the order namespaces first appear, so a tie goes to the first one read.
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for o in objects {
        if let Some(ns) = o["metadata"]["namespace"].as_str() {
            match counts.iter_mut().find(|(n, _)| *n == ns) {
                Some((_, c)) => *c += 1,
                None => counts.push((ns, 1)),
            }
        }
    }
    let mut best = ("default", 0);
    for (ns, n) in counts {
        if n > best.1 {
            best = (ns, n);
        }
    }
    best.0.to_string()
}

impl Cx {
    /// `labels:` and `annotations:` of an object's metadata, without the labels Piceli sets (a value other
    /// than Piceli's is a warning).
    pub fn meta(&mut self, item: &mut Item, o: &Value) {
        let what = describe(o);
        if let Some(l) = self.labels(item, &o["metadata"]["labels"], &what, "label") {
            item.entry("labels", l);
        }
        if let Some(a) = o["metadata"]["annotations"]
            .as_object()
            .filter(|a| !a.is_empty())
        {
            let a = self.strings(item, a, &what, "annotation");
            item.entry("annotations", a);
        }
    }

    /// A label map without Piceli's own labels, or `None` when nothing is left.
    pub fn labels(&mut self, item: &mut Item, v: &Value, what: &str, field: &str) -> Option<Dsl> {
        let mut labels = v.as_object()?.clone();
        for k in RESERVED_LABELS {
            if let Some(val) = labels.shift_remove(*k) {
                let piceli_sets = *k == "app.kubernetes.io/name" && val == self.app.as_str();
                if !piceli_sets && (*k != "app.kubernetes.io/managed-by" || val != "piceli") {
                    let val = val.as_str().map_or_else(|| val.to_string(), str::to_string);
                    let message = format!("{field} `{k}: {val}` dropped: Piceli sets `{k}` itself");
                    let note = format!("piceli: {message}");
                    if !item.comments.contains(&note) {
                        item.comments.push(note);
                    }
                    self.out
                        .warnings
                        .push(Warning::new(Code::ImportFieldChanged, what, message));
                }
            }
        }
        (!labels.is_empty()).then(|| self.strings(item, &labels, what, field))
    }

    /// A map of label or annotation values as strings: a number or boolean (which the API server refuses
    /// there) is written as its text, with a warning and a `// piceli:` comment on the item.
    pub fn strings(
        &mut self,
        item: &mut Item,
        m: &Map<String, Value>,
        what: &str,
        field: &str,
    ) -> Dsl {
        let quoted: Vec<String> = m
            .iter()
            .filter(|(_, v)| !v.is_string())
            .map(|(k, v)| format!("`{k}: {v}`"))
            .collect();
        if !quoted.is_empty() {
            let message = format!(
                "{field} value {} written as a string (the API server takes only strings there and refuses the object as it was)",
                quoted.join(", ")
            );
            item.comments.push(format!("piceli: PCL0185 {message}"));
            self.out
                .warnings
                .push(Warning::new(Code::ImportFieldChanged, what, message));
        }
        Dsl::str_map(m)
    }

    /// The lowered workload whose pods carry every label of `selector`.
    pub fn workload_selected_by(&self, selector: &Map<String, Value>) -> Option<&WorkloadRef> {
        if selector.is_empty() {
            return None;
        }
        self.workloads.iter().find(|w| {
            if w.included {
                // Rendered with the included workload's own selector: only an equal one round-trips.
                *selector == w.pod_labels
            } else {
                selector.iter().all(|(k, v)| w.pod_labels.get(k) == Some(v))
            }
        })
    }

    /// Record a warning.
    pub fn warn(&mut self, code: Code, o: &Value, message: impl Into<String>) {
        let w = Warning::new(code, describe(o), message);
        self.out.warnings.push(w);
    }
}
