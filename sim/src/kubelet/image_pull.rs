//! The kubelet's image pull, for pods of images pinned in a registry this machine reaches: a container
//! image written `HOST:PORT/NAME@sha256:…` on a loopback registry is pulled (a `HEAD` of
//! `/v2/NAME/manifests/DIGEST` with hyper's client, as a kubelet's pull first resolves the manifest)
//! before the pod starts.
//! A manifest the registry does not have keeps the pod Pending with the container waiting
//! `ErrImagePull`, then `ImagePullBackOff`, as a real kubelet reports; the pull is retried every
//! [`RETRY`], so pushing the image later lets the pod start. Other images (no digest, no port, a
//! registry that does not answer) start as before: the sim has no container runtime to pull with.

use std::collections::HashMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{ACCEPT, HOST, USER_AGENT};
use http_body_util::Empty;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use serde_json::{Value, json};

/// How long one pull may take.
const TIMEOUT: Duration = Duration::from_millis(500);
/// How soon a failed pull is tried again.
pub const RETRY: Duration = Duration::from_secs(1);

/// A pull that failed: the container, its image and what the registry said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullFailure {
    pub container: String,
    pub image: String,
    pub message: String,
    /// `ErrImagePull` on the first failure, `ImagePullBackOff` after.
    pub reason: &'static str,
}

/// Results of pulls: found manifests are kept; failures are retried after [`RETRY`].
#[derive(Default)]
pub struct ImagePulls {
    present: std::collections::HashSet<String>,
    failed: HashMap<String, (Instant, String)>,
    attempts: HashMap<String, u32>,
}

impl ImagePulls {
    /// Forgets pods that are gone.
    pub fn retain(&mut self, live: &std::collections::HashSet<&str>) {
        self.attempts.retain(|uid, _| live.contains(uid.as_str()));
    }

    /// Pulls the pod's checked images; the first that fails, if any.
    pub fn check(&mut self, pod: &Value, uid: &str, now: Instant) -> Option<PullFailure> {
        let containers = pod.pointer("/spec/containers").and_then(Value::as_array)?;
        for c in containers {
            let image = c.get("image").and_then(Value::as_str).unwrap_or_default();
            let Some(pull) = Pinned::parse(image) else {
                continue;
            };
            if self.present.contains(image) {
                continue;
            }
            let message = match self.failed.get(image) {
                Some((at, message)) if now < *at + RETRY => Some(message.clone()),
                _ => match pull.head() {
                    Head::Found => {
                        self.failed.remove(image);
                        self.present.insert(image.to_string());
                        None
                    }
                    Head::Unreachable => None,
                    Head::Refused(message) => {
                        self.failed
                            .insert(image.to_string(), (now, message.clone()));
                        Some(message)
                    }
                },
            };
            if let Some(message) = message {
                let attempts = self.attempts.entry(uid.to_string()).or_insert(0);
                *attempts += 1;
                let reason = if *attempts == 1 {
                    "ErrImagePull"
                } else {
                    "ImagePullBackOff"
                };
                let name = c
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                return Some(PullFailure {
                    container: name,
                    image: image.to_string(),
                    message,
                    reason,
                });
            }
        }
        None
    }
}

/// Writes the failed pull into the pod's status (when its reason changed) with the kubelet's events.
pub fn report(
    cluster: &crate::cluster::Cluster,
    pods: &crate::registry::ResourceType,
    pod: &Value,
    failure: &PullFailure,
) {
    let have = pod
        .pointer("/status/containerStatuses/0/state/waiting/reason")
        .and_then(Value::as_str);
    if have == Some(failure.reason) {
        return;
    }
    let started = match pod.pointer("/status/startTime").and_then(Value::as_str) {
        Some(t) => t.to_string(),
        None => crate::time::now_rfc3339(),
    };
    let status = failed_status(pod, failure, &started);
    let (ns, name) = (
        crate::util::s(pod, "/metadata/namespace"),
        crate::util::s(pod, "/metadata/name"),
    );
    let wrote = cluster.update(pods, ns, name, "status", "kubelet", |p| {
        p["status"] = status;
        true
    });
    if wrote.is_ok() {
        let (reason, message) = if failure.reason == "ErrImagePull" {
            (
                "Failed",
                format!(
                    "Failed to pull image \"{}\": {}",
                    failure.image, failure.message
                ),
            )
        } else {
            (
                "BackOff",
                format!("Back-off pulling image \"{}\"", failure.image),
            )
        };
        cluster.event(pod, true, reason, &message, "kubelet");
    }
}

/// The Pending status a kubelet reports while a container's image cannot be pulled.
pub fn failed_status(pod: &Value, failure: &PullFailure, started: &str) -> Value {
    let containers = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let statuses: Vec<Value> = containers
        .iter()
        .map(|c| {
            let image = c.get("image").and_then(Value::as_str).unwrap_or_default();
            let message = if failure.reason == "ErrImagePull" {
                failure.message.clone()
            } else {
                format!("Back-off pulling image \"{image}\": {}", failure.message)
            };
            json!({
                "name": c.get("name").cloned().unwrap_or(Value::Null),
                "image": image,
                "imageID": "",
                "ready": false,
                "restartCount": 0,
                "started": false,
                "state": {"waiting": {"reason": failure.reason, "message": message}},
            })
        })
        .collect();
    let cond = |t: &str, ok: bool| {
        let mut c = json!({"type": t, "status": if ok { "True" } else { "False" }, "lastProbeTime": null,
                           "lastTransitionTime": started});
        if !ok {
            c["reason"] = json!("ContainersNotReady");
            c["message"] = json!(format!(
                "containers with unready status: [{}]",
                failure.container
            ));
        }
        c
    };
    json!({
        "phase": "Pending",
        "conditions": [
            cond("PodReadyToStartContainers", true),
            cond("Initialized", true),
            cond("Ready", false),
            cond("ContainersReady", false),
            cond("PodScheduled", true),
        ],
        "hostIP": super::NODE_IP,
        "hostIPs": [{"ip": super::NODE_IP}],
        "startTime": started,
        "qosClass": "BestEffort",
        "containerStatuses": statuses,
    })
}

/// A loopback registry image pinned by digest: `127.0.0.1:5000/shop/api@sha256:…`.
struct Pinned<'a> {
    host: &'a str,
    name: &'a str,
    digest: &'a str,
}

enum Head {
    Found,
    /// Nothing answers there: not a registry this check can ask.
    Unreachable,
    Refused(String),
}

impl<'a> Pinned<'a> {
    fn parse(image: &'a str) -> Option<Pinned<'a>> {
        let (repo, digest) = image.rsplit_once('@')?;
        let hex = digest.strip_prefix("sha256:")?;
        if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let (host, name) = repo.split_once('/')?;
        let (hostname, port) = host.rsplit_once(':')?;
        port.parse::<u16>().ok()?;
        let loopback =
            hostname == "localhost" || hostname.starts_with("127.") || hostname == "[::1]";
        // A tag before the digest is ignored, as the kubelet pulls by digest.
        let last = name.rfind('/').map_or(0, |i| i + 1);
        let name = match name[last..].find(':') {
            Some(colon) => &name[..last + colon],
            None => name,
        };
        loopback.then_some(Pinned { host, name, digest })
    }

    fn head(&self) -> Head {
        let Some(addr) = self.host.to_socket_addrs().ok().and_then(|mut a| a.next()) else {
            return Head::Unreachable;
        };
        match self.ask(addr) {
            Err(_) => Head::Unreachable,
            Ok(200) => Head::Found,
            Ok(404) => Head::Refused(format!(
                "failed to pull and unpack image \"{image}\": failed to resolve reference \"{image}\": {image}: not found",
                image = format_args!("{}/{}@{}", self.host, self.name, self.digest)
            )),
            Ok(code) => Head::Refused(format!(
                "failed to resolve reference \"{}/{}@{}\": unexpected status from HEAD request: {code}",
                self.host, self.name, self.digest
            )),
        }
    }

    /// The status of the manifest's `HEAD`; an error when nothing answered in time with HTTP.
    fn ask(&self, addr: SocketAddr) -> Result<u16, String> {
        let request = http::Request::head(format!(
            "http://{addr}/v2/{}/manifests/{}",
            self.name, self.digest
        ))
        .header(HOST, self.host)
        .header(USER_AGENT, "piceli-sim-kubelet")
        .header(ACCEPT, MANIFEST_TYPES)
        .body(Empty::new())
        .map_err(|e| e.to_string())?;
        let call = async move {
            let response = client().request(request).await;
            response.map(|r| r.status().as_u16())
        };
        let bounded = async move { tokio::time::timeout(TIMEOUT, call).await };
        match crate::outbound::block_on(bounded)? {
            Ok(answered) => answered.map_err(|e| e.to_string()),
            Err(_elapsed) => Err("timed out".into()),
        }
    }
}

/// The manifest media types a pull accepts (OCI and Docker, single images and indexes).
const MANIFEST_TYPES: &str = "application/vnd.oci.image.manifest.v1+json, \
    application/vnd.oci.image.index.v1+json, application/vnd.docker.distribution.manifest.v2+json, \
    application/vnd.docker.distribution.manifest.list.v2+json";

/// The kubelet's registry client (plain HTTP to loopback registries), keeping idle connections to them
/// for the next pull; its connections run on the outgoing calls' runtime (`outbound.rs`).
fn client() -> Client<HttpConnector, Empty<Bytes>> {
    static CLIENT: OnceLock<Client<HttpConnector, Empty<Bytes>>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            let mut connector = HttpConnector::new();
            connector.set_connect_timeout(Some(TIMEOUT));
            connector.set_nodelay(true);
            Client::builder(TokioExecutor::new())
                .pool_idle_timeout(Duration::from_secs(30))
                .pool_max_idle_per_host(2)
                .pool_timer(TokioTimer::new())
                .build(connector)
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_images_pinned_by_digest_are_pulled() {
        let d = format!("sha256:{}", "a".repeat(64));
        let plain = format!("127.0.0.1:5000/shop/api@{d}");
        let p = Pinned::parse(&plain).expect("pinned");
        assert_eq!((p.host, p.name), ("127.0.0.1:5000", "shop/api"));
        let tagged = format!("localhost:5000/shop/api:1.0@{d}");
        let t = Pinned::parse(&tagged).expect("tagged");
        assert_eq!(t.name, "shop/api");
        assert!(Pinned::parse(&format!("ghcr.io/acme/api@{d}")).is_none());
        assert!(Pinned::parse("127.0.0.1:5000/shop/api:1.0").is_none());
        assert!(Pinned::parse(&format!("docker.io/library/nginx:1.27@{d}")).is_none());
    }

    #[test]
    fn an_unreachable_registry_is_not_a_failed_pull() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .expect("port")
            .local_addr()
            .expect("addr")
            .port();
        let pod = json!({"spec": {"containers": [{"name": "c",
            "image": format!("127.0.0.1:{port}/x@sha256:{}", "b".repeat(64))}]}});
        assert_eq!(ImagePulls::default().check(&pod, "u", Instant::now()), None);
    }
}
