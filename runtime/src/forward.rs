//! Port forwards to an app's pods through the Kubernetes API (kube's `Portforwarder`, no `kubectl`):
//! resolve a declared Service or workload port to a running, ready pod and its container port, then
//! open a byte stream to it.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use piceli_core::model::{App, PortRef, Workload};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::render::{COMPONENT_LABEL, NAME_LABEL};

/// Why a forward could not be opened (all [`piceli_core::Code::ForwardFailed`]).
#[derive(Debug, thiserror::Error)]
pub enum ForwardError {
    /// The name is neither a declared Service nor a declared workload.
    #[error("`{0}` is not a Service or workload of this app")]
    UnknownTarget(String),
    /// The port reference names no declared port.
    #[error("`{target}` has no port `{port}`")]
    UnknownPort {
        /// The Service or workload.
        target: String,
        /// The port as written.
        port: String,
    },
    /// No pod of the workload is running and ready.
    #[error("no running, ready pod of workload `{workload}` in namespace `{namespace}`")]
    NoReadyPod {
        /// The workload.
        workload: String,
        /// The namespace searched.
        namespace: String,
    },
    /// The workload's pods could not be listed (the cluster is unreachable or refused).
    #[error("cannot list the pods of workload `{workload}`: {message}")]
    ListPods {
        /// The workload.
        workload: String,
        /// What went wrong.
        message: String,
    },
    /// The API server refused or broke the forward.
    #[error("port forward to pod `{pod}` port {port} failed: {message}")]
    Stream {
        /// The pod.
        pod: String,
        /// The container port.
        port: u16,
        /// What went wrong.
        message: String,
    },
}

impl piceli_core::Coded for ForwardError {
    fn code(&self) -> piceli_core::Code {
        piceli_core::Code::ForwardFailed
    }
}

/// Where a declared port lives: the workload whose pods serve it and the container port number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortTarget {
    /// The workload whose pods serve the port.
    pub workload: String,
    /// The container port.
    pub port: u16,
}

/// A resolved forward destination: one pod and its container port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The pod's name.
    pub pod: String,
    /// The container port.
    pub port: u16,
}

/// Resolves `target` (a declared Service or workload) and an optional port (a Service port or
/// container port name, or a number; default the first declared port) to a workload and container port.
pub fn port_target(
    app: &App,
    target: &str,
    port: Option<&PortRef>,
) -> Result<PortTarget, ForwardError> {
    let unknown_port = |p: &PortRef| ForwardError::UnknownPort {
        target: target.to_string(),
        port: describe(p),
    };
    if let Some(service) = app.service(target) {
        let workload = app
            .workload(&service.selects.v)
            .ok_or_else(|| ForwardError::UnknownTarget(service.selects.v.clone()))?;
        let sp = match port {
            None => service.ports.first(),
            Some(PortRef::Name(n)) => service.ports.iter().find(|p| p.name.v == n.v),
            Some(PortRef::Number(n)) => service.ports.iter().find(|p| p.port.v == n.v),
        };
        let sp = match (sp, port) {
            (Some(sp), _) => sp,
            (None, Some(p)) => return Err(unknown_port(p)),
            (None, None) => {
                return Err(ForwardError::UnknownPort {
                    target: target.to_string(),
                    port: "(none declared)".into(),
                });
            }
        };
        let container_port = match &sp.target {
            None => to_port(sp.port.v),
            Some(p) => container_port(workload, p).ok_or_else(|| unknown_port(p))?,
        };
        return Ok(PortTarget {
            workload: workload.name.v.clone(),
            port: container_port,
        });
    }
    let workload = app
        .workload(target)
        .ok_or_else(|| ForwardError::UnknownTarget(target.to_string()))?;
    let port = match port {
        Some(p) => container_port(workload, p).ok_or_else(|| unknown_port(p))?,
        None => workload
            .containers
            .iter()
            .flat_map(|c| c.ports.first())
            .next()
            .map(|p| to_port(p.number.v))
            .ok_or_else(|| ForwardError::UnknownPort {
                target: target.to_string(),
                port: "(none declared)".into(),
            })?,
    };
    Ok(PortTarget {
        workload: workload.name.v.clone(),
        port,
    })
}

fn describe(p: &PortRef) -> String {
    match p {
        PortRef::Name(n) => n.v.clone(),
        PortRef::Number(n) => n.v.to_string(),
    }
}

fn to_port(n: i64) -> u16 {
    u16::try_from(n).unwrap_or(0)
}

/// A named container port's number, or the number itself.
fn container_port(workload: &Workload, p: &PortRef) -> Option<u16> {
    match p {
        PortRef::Number(n) => Some(to_port(n.v)),
        PortRef::Name(n) => workload
            .containers
            .iter()
            .flat_map(|c| &c.ports)
            .find(|cp| cp.name.v == n.v)
            .map(|cp| to_port(cp.number.v)),
    }
}

/// The label selector of a workload's pods (as rendered).
pub fn pod_selector(app: &App, workload: &str) -> String {
    let own = app.own_selector(workload);
    let labels: BTreeMap<&str, &str> = match &own {
        Some(own) => own.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect(),
        None => BTreeMap::from([
            (NAME_LABEL, app.name.v.as_str()),
            (COMPONENT_LABEL, workload),
        ]),
    };
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Whether a pod is running, ready and not being deleted.
pub fn pod_is_ready(pod: &Pod) -> bool {
    let deleting = pod.metadata.deletion_timestamp.is_some();
    let status = pod.status.as_ref();
    let running = status.and_then(|s| s.phase.as_deref()) == Some("Running");
    let ready = status
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
    !deleting && running && ready
}

/// Picks a running, ready pod of the workload (the newest, so a rollout's new pods win).
pub async fn ready_pod(
    client: &kube::Client,
    app: &App,
    namespace: &str,
    target: &PortTarget,
) -> Result<Endpoint, ForwardError> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let selector = pod_selector(app, &target.workload);
    let list = pods
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|e| ForwardError::ListPods {
            workload: target.workload.clone(),
            message: e.to_string(),
        })?;
    let newest = list.items.into_iter().filter(pod_is_ready).max_by(|a, b| {
        a.metadata
            .creation_timestamp
            .cmp(&b.metadata.creation_timestamp)
    });
    let pod = newest.ok_or_else(|| ForwardError::NoReadyPod {
        workload: target.workload.clone(),
        namespace: namespace.to_string(),
    })?;
    Ok(Endpoint {
        pod: pod.metadata.name.unwrap_or_default(),
        port: target.port,
    })
}

/// An open forward: the byte stream to the pod's port, and the forwarder that must outlive it.
pub struct Forward {
    /// The stream (read and write the pod's port).
    pub stream: Box<dyn Stream>,
    /// Join it after dropping the stream to learn whether the forward ended cleanly.
    pub forwarder: kube::api::Portforwarder,
    /// Where it goes.
    pub endpoint: Endpoint,
}

/// A bidirectional byte stream.
pub trait Stream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Stream for T {}

/// Opens a forward to one pod's port.
pub async fn open(
    client: &kube::Client,
    namespace: &str,
    endpoint: &Endpoint,
) -> Result<Forward, ForwardError> {
    let fail = |message: String| ForwardError::Stream {
        pod: endpoint.pod.clone(),
        port: endpoint.port,
        message,
    };
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let mut forwarder = pods
        .portforward(&endpoint.pod, &[endpoint.port])
        .await
        .map_err(|e| fail(e.to_string()))?;
    let stream = forwarder
        .take_stream(endpoint.port)
        .ok_or_else(|| fail("the API server gave no stream for the port".into()))?;
    Ok(Forward {
        stream: Box::new(stream),
        forwarder,
        endpoint: endpoint.clone(),
    })
}

/// Resolves a declared target and port, picks a ready pod and opens a forward to it.
pub async fn connect(
    client: &kube::Client,
    app: &App,
    namespace: &str,
    target: &str,
    port: Option<&PortRef>,
) -> Result<Forward, ForwardError> {
    let pt = port_target(app, target, port)?;
    let endpoint = ready_pod(client, app, namespace, &pt).await?;
    open(client, namespace, &endpoint).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use piceli_core::model::{Container, ContainerPort, Service, ServicePort};
    use piceli_core::spanned::Spanned;

    fn hello() -> App {
        let port = |name: &str, n: i64| ContainerPort {
            name: Spanned::bare(name.into()),
            number: Spanned::bare(n),
            protocol: None,
        };
        let mut app = App {
            name: Spanned::bare("hello".into()),
            ..App::default()
        };
        app.workloads.push(Workload {
            name: Spanned::bare("web".into()),
            containers: vec![Container {
                ports: vec![port("http", 8080), port("metrics", 9090)],
                ..Container::default()
            }],
            ..Workload::default()
        });
        app.services.push(Service {
            name: Spanned::bare("front".into()),
            selects: Spanned::bare("web".into()),
            ports: vec![ServicePort {
                name: Spanned::bare("http".into()),
                port: Spanned::bare(80),
                target: Some(PortRef::Name(Spanned::bare("http".into()))),
                node_port: None,
            }],
            ..Service::default()
        });
        app
    }

    fn target(workload: &str, port: u16) -> PortTarget {
        PortTarget {
            workload: workload.into(),
            port,
        }
    }

    #[test]
    fn resolves_services_and_workloads_to_container_ports() {
        let app = hello();
        assert_eq!(
            port_target(&app, "front", None).unwrap(),
            target("web", 8080)
        );
        let by_number = PortRef::Number(Spanned::bare(80));
        assert_eq!(
            port_target(&app, "front", Some(&by_number)).unwrap(),
            target("web", 8080)
        );
        assert_eq!(port_target(&app, "web", None).unwrap(), target("web", 8080));
        let metrics = PortRef::Name(Spanned::bare("metrics".into()));
        assert_eq!(
            port_target(&app, "web", Some(&metrics)).unwrap(),
            target("web", 9090)
        );
        let missing = PortRef::Name(Spanned::bare("grpc".into()));
        assert!(matches!(
            port_target(&app, "web", Some(&missing)),
            Err(ForwardError::UnknownPort { .. })
        ));
        assert!(matches!(
            port_target(&app, "nope", None),
            Err(ForwardError::UnknownTarget(_))
        ));
        assert_eq!(
            pod_selector(&app, "web"),
            "app.kubernetes.io/component=web,app.kubernetes.io/name=hello"
        );
    }
}
