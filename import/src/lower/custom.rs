//! Custom resources whose CRD `--crds` gives: `resource GROUP/VERSION/KIND NAME { … }` items, their
//! top-level fields as blocks checked against the version's `openAPIV3Schema` (the walk `app!` uses), and
//! the references `app!` checks in them (`piceli_core::validate::REFERENCES`) satisfied by the objects
//! imported. An object that would not compile as a `resource` stays in the include file, with why.

use super::{Cx, RESERVED_LABELS, describe};
use crate::crds::CrdFile;
use crate::dsl::Item;
use piceli_core::Loc;
use piceli_core::crd::{CrdVersion, Node};
use piceli_core::model::{Block, BlockValue};
use piceli_core::schema::check::check_object;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

const GATEWAY: &str = "gateway.networking.k8s.io";
const CERT_MANAGER: &str = "cert-manager.io";
const MONITORING: &str = "monitoring.coreos.com";

/// Metadata a `resource` item writes (the name, `labels:`, `annotations:`; the namespace is the target's).
const METADATA: &[&str] = &["name", "namespace", "labels", "annotations"];

/// What lowering the custom resources gave.
#[derive(Default)]
pub(crate) struct Custom {
    /// The items, each with the index of its object (`external service` items before their route).
    pub items: Vec<(usize, Item)>,
    /// Objects of a given CRD kept in the include file: `describe` and why.
    pub kept: Vec<(String, String)>,
    /// The indices of the CRD files whose kinds became items.
    pub files: BTreeSet<usize>,
}

/// An object of a given CRD whose fields pass its schema.
struct Candidate<'a> {
    index: usize,
    object: &'a Value,
    group: String,
    file: usize,
}

/// Lower the objects not lowered yet whose kind one of `files` defines, marking them in `lowered`.
pub(crate) fn lower(
    cx: &mut Cx,
    objects: &[Value],
    lowered: &mut [bool],
    files: &[CrdFile],
) -> Custom {
    let mut out = Custom::default();
    let mut candidates = Vec::new();
    for (index, o) in objects.iter().enumerate() {
        if lowered[index] {
            continue;
        }
        let Some((group, file, version)) = find(files, o) else {
            continue;
        };
        match fits(o, version) {
            Ok(()) => candidates.push(Candidate {
                index,
                object: o,
                group,
                file,
            }),
            Err(why) => out.kept.push((describe(o), why)),
        }
    }
    let names_of = |group: &str, kind: &str| -> BTreeMap<String, &Value> {
        candidates
            .iter()
            .filter(|c| c.group == group && c.object["kind"] == kind)
            .map(|c| (name(c.object).to_string(), c.object))
            .collect()
    };
    let gateways = names_of(GATEWAY, "Gateway");
    // Gateways of the input that stay included: a route attached to one stays too (it is not someone
    // else's, so not `external`, and `app!` checks parentRefs against the app's `resource` Gateways).
    let included_gateways: BTreeSet<&str> = objects
        .iter()
        .filter(|o| {
            o["kind"] == "Gateway"
                && o["apiVersion"]
                    .as_str()
                    .and_then(|v| v.split_once('/'))
                    .is_some_and(|(group, _)| group == GATEWAY)
        })
        .map(name)
        .filter(|n| !gateways.contains_key(*n))
        .collect();
    let issuers = names_of(CERT_MANAGER, "Issuer");
    let services = Services::of(cx, objects, lowered);
    let workloads = Workloads::of(cx);
    for c in &candidates {
        let refs = Refs {
            gateways: &gateways,
            included_gateways: &included_gateways,
            issuers: &issuers,
            services: &services,
            workloads: &workloads,
        };
        let mut externals = Externals::default();
        if let Err(why) = refs.check(c, &mut externals) {
            out.kept.push((describe(c.object), why));
            continue;
        }
        let what = describe(c.object);
        let declare = |set: &mut BTreeSet<String>, word: &str, verb: &str, name: String| {
            set.insert(name.clone()).then(|| {
                let mut ext = Item::new(word, &name);
                ext.comments.push(format!(
                    "piceli: {what} {verb} it and the input does not have it: declared `external`, so the app refers to it and never writes, adopts or prunes it"
                ));
                (c.index, ext)
            })
        };
        for gw in externals.gateways {
            out.items.extend(declare(
                &mut cx.external_gateways,
                "external gateway",
                "attaches to",
                gw,
            ));
        }
        for svc in externals.services {
            out.items.extend(declare(
                &mut cx.external_services,
                "external service",
                "routes to",
                svc,
            ));
        }
        out.items.push((c.index, item(cx, c)));
        lowered[c.index] = true;
        out.files.insert(c.file);
    }
    out
}

fn name(o: &Value) -> &str {
    o["metadata"]["name"].as_str().unwrap_or_default()
}

/// The group, CRD file and version that define `o`'s `apiVersion` and `kind` (the first file that does).
fn find<'f>(files: &'f [CrdFile], o: &Value) -> Option<(String, usize, &'f CrdVersion)> {
    let (group, version) = o["apiVersion"].as_str()?.split_once('/')?;
    let kind = o["kind"].as_str()?;
    files.iter().enumerate().find_map(|(i, f)| {
        f.crds
            .iter()
            .filter(|c| c.group == group && c.kind == kind)
            .find_map(|c| c.versions.iter().find(|v| v.name == version))
            .map(|v| (group.to_string(), i, v))
    })
}

/// The object's top-level fields besides those Piceli sets, as a block.
fn fields(o: &Value) -> Map<String, Value> {
    o.as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| !matches!(k.as_str(), "apiVersion" | "kind" | "metadata" | "status"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Whether `o` can be written as a `resource` item: metadata a `resource` item has, and fields its
/// version's schema accepts (as `app!` checks them); else why not.
fn fits(o: &Value, version: &CrdVersion) -> Result<(), String> {
    let meta = o["metadata"].as_object().cloned().unwrap_or_default();
    if let Some(k) = meta.keys().find(|k| !METADATA.contains(&k.as_str())) {
        return Err(format!(
            "`metadata.{k}` has no place in a `resource` item (it writes the name, labels and annotations)"
        ));
    }
    for field in ["labels", "annotations"] {
        if meta
            .get(field)
            .and_then(Value::as_object)
            .is_some_and(|m| m.values().any(|v| !v.is_string()))
        {
            return Err(format!("a `metadata.{field}` value is not a string"));
        }
    }
    let block = match BlockValue::from_json(&Value::Object(fields(o)), Loc::NONE) {
        Some(BlockValue::Map(b)) => b,
        _ => Block::new(Loc::NONE, Vec::new()),
    };
    let mut problems = Vec::new();
    check_object::<&Node>(
        &block,
        &version.schema,
        &describe(o),
        &["metadata"],
        &mut problems,
    );
    match problems.first() {
        None => Ok(()),
        Some(d) => Err(format!(
            "its CRD's schema refuses it ({} {}), as `app!` would",
            d.code, d.message
        )),
    }
}

/// The `resource` item of a candidate.
fn item(cx: &mut Cx, c: &Candidate) -> Item {
    let o = c.object;
    let api = o["apiVersion"].as_str().unwrap_or_default();
    let kind = o["kind"].as_str().unwrap_or_default();
    let mut item = Item::new(&format!("resource {api}/{kind}"), name(o));
    cx.meta(&mut item, o);
    for (k, v) in fields(o) {
        item.json_entry(&k, Some(&v));
    }
    item
}

/// The input's Services, as `app!` will know them: labels (with Piceli's for those lowered first-class)
/// and port names and numbers.
struct Services {
    by_name: BTreeMap<String, Service>,
    /// Some Service stays in the include file (its labels there may select it).
    any_included: bool,
}

struct Service {
    labels: BTreeMap<String, String>,
    ports: Vec<(Option<String>, Option<i64>)>,
}

impl Services {
    fn of(cx: &Cx, objects: &[Value], lowered: &[bool]) -> Services {
        let mut by_name = BTreeMap::new();
        let mut any_included = false;
        for (i, o) in objects.iter().enumerate() {
            if o["apiVersion"] != "v1" || o["kind"] != "Service" {
                continue;
            }
            let first_class = lowered[i];
            any_included |= !first_class;
            let mut labels: BTreeMap<String, String> = o["metadata"]["labels"]
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(k, _)| !first_class || !RESERVED_LABELS.contains(&k.as_str()))
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect();
            if first_class {
                labels.insert("app.kubernetes.io/name".into(), cx.app.clone());
                labels.insert("app.kubernetes.io/managed-by".into(), "piceli".into());
            }
            let ports = o["spec"]["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| (p["name"].as_str().map(String::from), p["port"].as_i64()))
                .collect();
            by_name.insert(name(o).to_string(), Service { labels, ports });
        }
        Services {
            by_name,
            any_included,
        }
    }
}

type Labels = BTreeMap<String, String>;

/// The workloads lowered, by the labels their pods surely render with (the template's labels without those
/// Piceli sets: a subset of what they carry, so a PodMonitor found to select nothing stays included rather
/// than failing the build), with their first-class container ports.
struct Workloads {
    lowered: Vec<(Labels, Vec<(String, i64)>)>,
    /// Some workload stays in the include file: `app!` leaves PodMonitors alone then.
    any_included: bool,
}

impl Workloads {
    fn of(cx: &Cx) -> Workloads {
        let lowered = cx
            .workloads
            .iter()
            .filter(|w| !w.included)
            .map(|w| {
                let labels = w
                    .pod_labels
                    .iter()
                    .filter(|(k, _)| !RESERVED_LABELS.contains(&k.as_str()))
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect();
                (labels, w.ports.clone())
            })
            .collect();
        Workloads {
            lowered,
            any_included: cx.workloads.iter().any(|w| w.included),
        }
    }
}

/// The objects references may name.
struct Refs<'a> {
    gateways: &'a BTreeMap<String, &'a Value>,
    included_gateways: &'a BTreeSet<&'a str>,
    issuers: &'a BTreeMap<String, &'a Value>,
    services: &'a Services,
    workloads: &'a Workloads,
}

/// `v[key]` unset, or a string among `values`.
fn unset_or(v: &Value, key: &str, values: &[&str]) -> bool {
    match &v[key] {
        Value::Null => true,
        Value::String(s) => values.contains(&s.as_str()),
        _ => false,
    }
}

fn each(v: &Value) -> impl Iterator<Item = &Value> {
    v.as_array().into_iter().flatten()
}

/// Objects the input lacks that the imported resources name: declared `external`.
#[derive(Default)]
struct Externals {
    services: Vec<String>,
    gateways: Vec<String>,
}

impl Refs<'_> {
    /// The table's references of `c` (docs/dsl.md, "References checked"), as `app!` will check them:
    /// `Err` with why one fails; Services and Gateways the input lacks that a route names go to
    /// `externals`.
    fn check(&self, c: &Candidate, externals: &mut Externals) -> Result<(), String> {
        let o = c.object;
        let spec = &o["spec"];
        match (c.group.as_str(), o["kind"].as_str().unwrap_or_default()) {
            (GATEWAY, "HTTPRoute" | "GRPCRoute") => {
                for p in each(&spec["parentRefs"]) {
                    self.parent(p, &mut externals.gateways)?;
                }
                for b in each(&spec["rules"]).flat_map(|r| each(&r["backendRefs"])) {
                    self.backend(b, &mut externals.services)?;
                }
                Ok(())
            }
            (CERT_MANAGER, "Certificate") => self.issuer(&spec["issuerRef"]),
            (MONITORING, "ServiceMonitor") => self.service_monitor(spec),
            (MONITORING, "PodMonitor") => self.pod_monitor(spec),
            _ => Ok(()),
        }
    }

    /// A parentRef: a Gateway among the imported objects (and one of its listeners), or one the input
    /// lacks, which goes to `externals` (its listeners are then not checked, as `app!` does not).
    fn parent(&self, p: &Value, externals: &mut Vec<String>) -> Result<(), String> {
        if !unset_or(p, "kind", &["Gateway"])
            || !unset_or(p, "group", &[GATEWAY])
            || p.get("namespace").is_some()
        {
            return Ok(());
        }
        let Some(gw) = p["name"].as_str() else {
            return Ok(());
        };
        if self.included_gateways.contains(gw) {
            return Err(format!(
                "its parent Gateway `{gw}` stays included (`app!` checks parentRefs against the app's `resource` Gateways)"
            ));
        }
        let Some(g) = self.gateways.get(gw) else {
            externals.push(gw.to_string());
            return Ok(());
        };
        match p["sectionName"].as_str() {
            Some(section) if !each(&g["spec"]["listeners"]).any(|l| l["name"] == section) => {
                Err(format!("Gateway `{gw}` has no listener `{section}`"))
            }
            _ => Ok(()),
        }
    }

    fn backend(&self, b: &Value, externals: &mut Vec<String>) -> Result<(), String> {
        if !unset_or(b, "kind", &["Service"])
            || !unset_or(b, "group", &["", "core"])
            || b.get("namespace").is_some()
        {
            return Ok(());
        }
        let Some(svc) = b["name"].as_str() else {
            return Ok(());
        };
        let Some(s) = self.services.by_name.get(svc) else {
            externals.push(svc.to_string());
            return Ok(());
        };
        match b["port"].as_i64() {
            Some(port) if s.ports.iter().any(|(_, p)| *p == Some(port)) => Ok(()),
            Some(port) => Err(format!("Service `{svc}` has no port {port}")),
            None => Err(format!("its backend Service `{svc}` is given no port")),
        }
    }

    fn issuer(&self, r: &Value) -> Result<(), String> {
        if r.is_null() || !unset_or(r, "group", &[CERT_MANAGER]) {
            return Ok(());
        }
        match r["kind"].as_str() {
            None | Some("Issuer") => {}
            Some("ClusterIssuer") => return Ok(()),
            Some(other) => return Err(format!("`{other}` is not a cert-manager issuer kind")),
        }
        match r["name"].as_str() {
            Some(n) if !self.issuers.contains_key(n) => Err(format!(
                "its Issuer `{n}` is not among the imported objects"
            )),
            _ => Ok(()),
        }
    }

    fn pod_monitor(&self, spec: &Value) -> Result<(), String> {
        let selector = &spec["selector"];
        if spec.get("namespaceSelector").is_some()
            || !selector.is_object()
            || selector.get("matchExpressions").is_some()
            || self.workloads.any_included
        {
            return Ok(());
        }
        let Some(wanted) = selector["matchLabels"].as_object() else {
            return Ok(());
        };
        if wanted.is_empty() || wanted.values().any(|v| !v.is_string()) {
            return Ok(());
        }
        let selected: Vec<&Vec<(String, i64)>> = self
            .workloads
            .lowered
            .iter()
            .filter(|(labels, _)| {
                wanted
                    .iter()
                    .all(|(k, v)| labels.get(k).is_some_and(|l| v == l.as_str()))
            })
            .map(|(_, ports)| ports)
            .collect();
        if selected.is_empty() {
            return Err(
                "its selector selects no imported workload's pods (by the labels they surely carry)"
                    .into(),
            );
        }
        let ports: Vec<&(String, i64)> = selected.into_iter().flatten().collect();
        for e in each(&spec["podMetricsEndpoints"]) {
            if let Some(port) = e["port"].as_str() {
                if !ports.iter().any(|(n, _)| n == port) {
                    return Err(format!(
                        "no workload it selects has a container port named `{port}`"
                    ));
                }
            } else if let Some(n) = e["portNumber"].as_i64()
                && !ports.iter().any(|(_, p)| *p == n)
            {
                return Err(format!("no workload it selects has container port {n}"));
            }
        }
        Ok(())
    }

    fn service_monitor(&self, spec: &Value) -> Result<(), String> {
        let selector = &spec["selector"];
        if spec.get("namespaceSelector").is_some()
            || !selector.is_object()
            || selector.get("matchExpressions").is_some()
        {
            return Ok(());
        }
        let Some(wanted) = selector["matchLabels"].as_object() else {
            return Ok(());
        };
        if wanted.is_empty() || wanted.values().any(|v| !v.is_string()) {
            return Ok(());
        }
        let selected: Vec<&Service> = self
            .services
            .by_name
            .values()
            .filter(|s| {
                wanted
                    .iter()
                    .all(|(k, v)| s.labels.get(k).is_some_and(|l| v == l.as_str()))
            })
            .collect();
        if selected.is_empty() {
            return if self.services.any_included {
                Ok(())
            } else {
                Err(
                    "its selector selects no imported Service (by the labels it renders with)"
                        .into(),
                )
            };
        }
        let names: Vec<&str> = selected
            .iter()
            .flat_map(|s| s.ports.iter().filter_map(|(n, _)| n.as_deref()))
            .collect();
        for e in each(&spec["endpoints"]) {
            if let Some(port) = e["port"].as_str()
                && !names.contains(&port)
            {
                return Err(format!("no Service it selects has a port named `{port}`"));
            }
        }
        Ok(())
    }
}
