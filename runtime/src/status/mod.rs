//! `status`: is the app up, and which URLs reach it. Reads each declared workload and its pods, the live
//! release (the journal's and the cluster's record), the last check results and the Services and
//! Ingresses, then applies the rules in [`rules`] to name one state: `up`, `degraded`, `down` or `unknown`.

pub mod certs;
pub mod checks;
pub mod health;
pub mod report;
pub mod rules;
pub mod urls;

pub use crate::journal::CheckResult;
pub use health::{Health, WorkloadHealth};
pub use report::{ReleaseInfo, Report, SCHEMA};
pub use rules::State;
pub use urls::Url;

use crate::engine::record;
use crate::engine::session::Session;
use crate::forward::pod_selector;
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::{Node, Pod, Secret, Service};
use k8s_openapi::api::networking::v1::Ingress;
use kube::api::{Api, ListParams};
use piceli_core::model::{ServiceType, WorkloadKind};
use serde_json::Value;
use std::collections::BTreeMap;

/// What was read from the cluster.
struct Live {
    record: Option<(u64, String)>,
    workloads: Vec<WorkloadHealth>,
    services: BTreeMap<String, Value>,
    ingresses: BTreeMap<String, Value>,
    node: Option<String>,
    certificates: Vec<certs::Certificate>,
}

fn to_value<T: serde::Serialize>(o: T) -> Value {
    serde_json::to_value(o).unwrap_or(Value::Null)
}

async fn get<K>(client: &kube::Client, ns: &str, name: &str) -> Result<Option<Value>, kube::Error>
where
    K: kube::Resource<Scope = NamespaceResourceScope>
        + Clone
        + std::fmt::Debug
        + serde::de::DeserializeOwned
        + serde::Serialize,
    K::DynamicType: Default,
{
    let api: Api<K> = Api::namespaced(client.clone(), ns);
    Ok(api.get_opt(name).await?.map(to_value))
}

/// A node's address for NodePort URLs (ExternalIP first, then InternalIP); `None` when nodes cannot be
/// listed (no permission) or have none.
async fn node_address(client: &kube::Client) -> Option<String> {
    let nodes: Api<Node> = Api::all(client.clone());
    let list = nodes.list(&ListParams::default().limit(5)).await.ok()?;
    let addresses: Vec<_> = list
        .items
        .iter()
        .filter_map(|n| n.status.as_ref()?.addresses.clone())
        .flatten()
        .collect();
    ["ExternalIP", "InternalIP"].iter().find_map(|t| {
        addresses
            .iter()
            .find(|a| a.type_ == *t)
            .map(|a| a.address.clone())
    })
}

async fn read_live(session: &Session, ns: &str) -> Result<Live, String> {
    let err = |e: kube::Error| e.to_string();
    let client = &session.conn().client;
    let app = &session.app();
    let record = record::read(session.conn(), &app.name.v, ns)
        .await
        .map_err(|e| e.to_string())?;
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let mut workloads = Vec::new();
    for w in &app.workloads {
        let name = w.name.v.as_str();
        let object = match w.kind {
            WorkloadKind::Deployment => get::<Deployment>(client, ns, name).await.map_err(err)?,
            WorkloadKind::StatefulSet => get::<StatefulSet>(client, ns, name).await.map_err(err)?,
            WorkloadKind::DaemonSet => get::<DaemonSet>(client, ns, name).await.map_err(err)?,
            WorkloadKind::Job => get::<Job>(client, ns, name).await.map_err(err)?,
            WorkloadKind::CronJob => get::<CronJob>(client, ns, name).await.map_err(err)?,
        };
        let pod_list = match (&object, w.kind) {
            (None, _) | (_, WorkloadKind::CronJob) => Vec::new(),
            _ => pods
                .list(&ListParams::default().labels(&pod_selector(app, name)))
                .await
                .map_err(err)?
                .items
                .into_iter()
                .map(to_value)
                .collect(),
        };
        workloads.push(health::workload_health(
            w.kind.kind(),
            name,
            object.as_ref(),
            &pod_list,
        ));
    }
    let mut services = BTreeMap::new();
    for s in app.services.iter().filter(|s| {
        matches!(
            s.service_type,
            ServiceType::LoadBalancer | ServiceType::NodePort
        )
    }) {
        if let Some(v) = get::<Service>(client, ns, &s.name.v).await.map_err(err)? {
            services.insert(s.name.v.clone(), v);
        }
    }
    let mut ingresses = BTreeMap::new();
    for i in app.ingresses.iter().filter(|i| i.host.is_none()) {
        if let Some(v) = get::<Ingress>(client, ns, &i.name.v).await.map_err(err)? {
            ingresses.insert(i.name.v.clone(), v);
        }
    }
    let node = if services
        .values()
        .any(|s| s.pointer("/spec/ports/0/nodePort").is_some())
    {
        node_address(client).await
    } else {
        None
    };
    // Generated certificates: their expiry (the Secret is read; only the certificate is parsed).
    let now = jiff::Timestamp::now().as_second();
    let mut certificates = Vec::new();
    for (secret, entry, key) in certs::generated(app) {
        if let Some(live) = get::<Secret>(client, ns, &secret).await.map_err(err)?
            && let Some(c) = certs::read(&secret, &entry, &key, &live, now)
        {
            certificates.push(c);
        }
    }
    Ok(Live {
        record,
        workloads,
        services,
        ingresses,
        node,
        certificates,
    })
}

/// The namespace a session works in (`--namespace`, else the target's).
pub fn namespace(session: &Session) -> String {
    session
        .render_options()
        .namespace
        .clone()
        .unwrap_or_else(|| session.target().namespace.v.clone())
}

/// How the journal's release `number` was approved (none when the journal cannot say).
fn approval(session: &Session, number: u64) -> Option<report::ApprovalInfo> {
    let journal = &session.state().journal;
    let release = journal
        .releases()
        .ok()?
        .into_iter()
        .find(|r| r.number == number)?;
    let approvals = journal.approvals().ok()?;
    let a = crate::journal::approval_of(&approvals, &release)?;
    Some(report::ApprovalInfo {
        kind: a.kind.as_str().to_string(),
        command: a.command.clone(),
        approved_at: a.approved_at.clone(),
        sealed: a.sealed(),
    })
}

/// Read everything and decide the app's state. Never fails: a cluster that cannot be read makes the state
/// `unknown` with the reason.
pub async fn status(session: &Session) -> Report {
    let ns = namespace(session);
    let journal_release = session.live_release().ok().flatten();
    let checks = checks::last_check_results(&session.state().journal);
    let (live, unreachable) = match read_live(session, &ns).await {
        Ok(live) => (Some(live), None),
        Err(e) => (None, Some(e)),
    };
    let cluster_release = live.as_ref().and_then(|l| l.record.clone());
    let workloads = live
        .as_ref()
        .map(|l| l.workloads.clone())
        .unwrap_or_default();
    let (state, reasons) = rules::decide(&rules::Inputs {
        unreachable: unreachable.as_deref(),
        deployed: journal_release.is_some() || cluster_release.is_some(),
        workloads: &workloads,
        checks: &checks,
    });
    let empty = BTreeMap::new();
    let urls = urls::urls(
        session.app(),
        live.as_ref().map_or(&empty, |l| &l.services),
        live.as_ref().map_or(&empty, |l| &l.ingresses),
        live.as_ref().and_then(|l| l.node.as_deref()),
    );
    Report {
        schema: SCHEMA,
        app: session.app().name.v.clone(),
        target: session.target().name.v.clone(),
        namespace: ns,
        server: session.conn().server.clone(),
        state,
        reasons,
        release: ReleaseInfo {
            journal: journal_release,
            cluster: cluster_release.as_ref().map(|r| r.0),
            plan: cluster_release.map(|r| r.1),
            approval: journal_release.and_then(|n| approval(session, n)),
        },
        workloads,
        checks,
        urls,
        certificates: live.map(|l| l.certificates).unwrap_or_default(),
    }
}
