//! The webhook configurations stored in the simulator, parsed once and cached: the cache is reloaded
//! only after a Mutating- or ValidatingWebhookConfiguration changed (seen on the store's event hub,
//! which also carries other processes' writes), so a write costs a lock and a drain of the events
//! published since the previous write, not a list of the configurations.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use serde_json::Value;
use tokio::sync::broadcast;

use crate::hooks::Hooks;
use crate::registry::ResourceType;
use crate::status::ApiError;
use crate::storage::{Event, Store};

use super::matching::{self, Rule};

/// Store key of MutatingWebhookConfigurations.
pub const MUTATING_KEY: &str = "admissionregistration.k8s.io/mutatingwebhookconfigurations";
/// Store key of ValidatingWebhookConfigurations.
pub const VALIDATING_KEY: &str = "admissionregistration.k8s.io/validatingwebhookconfigurations";

/// Where a webhook is reached.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientConfig {
    /// `clientConfig.url`.
    Url(String),
    /// `clientConfig.service`.
    Service {
        namespace: String,
        name: String,
        path: String,
        port: u16,
    },
    /// Neither (or both): every call fails with this reason.
    Invalid(String),
}

impl ClientConfig {
    /// The URL calls go to, as the configuration names it (a Service as `https://NAME.NAMESPACE.svc:PORT/PATH`).
    pub fn url(&self) -> String {
        match self {
            ClientConfig::Url(url) => url.clone(),
            ClientConfig::Service {
                namespace,
                name,
                path,
                port,
            } => format!("https://{name}.{namespace}.svc:{port}{path}"),
            ClientConfig::Invalid(_) => String::new(),
        }
    }
}

/// One webhook of a configuration, with the API's defaults applied.
#[derive(Debug)]
pub struct Webhook {
    pub name: String,
    pub rules: Vec<Rule>,
    pub namespace_selector: Value,
    pub object_selector: Value,
    /// `failurePolicy: Ignore` (the default is Fail).
    pub ignore_failure: bool,
    pub timeout: Duration,
    /// `sideEffects` is None or NoneOnDryRun, so dry-run requests may be sent.
    pub dry_run_safe: bool,
    /// `reinvocationPolicy: IfNeeded` (mutating webhooks only).
    pub reinvoke_if_needed: bool,
    /// `admissionReviewVersions` includes v1 (the only version the simulator sends).
    pub speaks_v1: bool,
    pub client: ClientConfig,
    /// The keep-alive connections of this webhook, verified against `caBundle` only, or why its TLS
    /// client could not be built.
    pub pool: Result<super::pool::Pool, String>,
}

/// The parsed configurations at one point in time, in calling order (configuration name, then the
/// order of `webhooks`).
#[derive(Debug, Default)]
pub struct Snapshot {
    /// The mutating webhooks, in calling order.
    pub mutating: Vec<Webhook>,
    /// The validating webhooks, in calling order.
    pub validating: Vec<Webhook>,
}

impl Snapshot {
    /// Whether any webhook could be called for this resource and subresource (any operation).
    /// Admission configuration objects themselves are never admitted by webhooks (as in the real
    /// server, so a broken webhook cannot lock its own configuration).
    pub fn may_match(&self, rt: &ResourceType, subresource: &str) -> bool {
        if rt.group == "admissionregistration.k8s.io" {
            return false;
        }
        self.mutating
            .iter()
            .chain(&self.validating)
            .any(|h| matching::rules_may_match(&h.rules, rt, subresource))
    }

    fn load(store: &Store) -> Result<Snapshot, ApiError> {
        let read = |key: &str| -> Result<Vec<Webhook>, ApiError> {
            let (mut configs, _) = store.list(key, None, None)?;
            configs.sort_by(|a, b| a.name.cmp(&b.name));
            Ok(configs
                .iter()
                .flat_map(|c| parse_configuration(&c.object))
                .collect())
        };
        Ok(Snapshot {
            mutating: read(MUTATING_KEY)?,
            validating: read(VALIDATING_KEY)?,
        })
    }
}

/// The cache of one simulator, and the hooks its calls dial pods through.
pub struct Webhooks {
    state: Mutex<Option<Cached>>,
    /// Pod ports mapped to real local addresses (a webhook Service's pods).
    pub(super) hooks: Arc<Hooks>,
}

struct Cached {
    events: broadcast::Receiver<Arc<Event>>,
    snapshot: Arc<Snapshot>,
}

impl Webhooks {
    /// An empty cache; calls to Services dial the pods `hooks` maps.
    pub fn new(hooks: Arc<Hooks>) -> Webhooks {
        Webhooks {
            state: Mutex::new(None),
            hooks,
        }
    }

    /// The current configurations. Must not be called inside a store transaction.
    pub fn current(&self, store: &Store) -> Result<Arc<Snapshot>, ApiError> {
        let mut state = self
            .state
            .lock()
            .map_err(|_| ApiError::internal("webhook cache lock poisoned"))?;
        let stale = match state.as_mut() {
            None => true,
            Some(c) => drain_changed(&mut c.events),
        };
        if stale {
            // Subscribe before reading, so a change committed meanwhile is seen next time.
            let events = match state.take() {
                Some(c) => c.events,
                None => store.hub().subscribe(),
            };
            let snapshot = Arc::new(Snapshot::load(store)?);
            *state = Some(Cached { events, snapshot });
        }
        match state.as_ref() {
            Some(c) => Ok(c.snapshot.clone()),
            None => Err(ApiError::internal("webhook cache missing")),
        }
    }
}

/// Consumes the pending events; true when a webhook configuration changed (or events were lost).
fn drain_changed(rx: &mut broadcast::Receiver<Arc<Event>>) -> bool {
    let mut changed = false;
    loop {
        match rx.try_recv() {
            Ok(e) => changed |= e.rk == MUTATING_KEY || e.rk == VALIDATING_KEY,
            Err(broadcast::error::TryRecvError::Empty) => return changed,
            Err(broadcast::error::TryRecvError::Lagged(_)) => changed = true,
            Err(broadcast::error::TryRecvError::Closed) => return true,
        }
    }
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// The webhooks of one stored configuration.
pub fn parse_configuration(obj: &Value) -> Vec<Webhook> {
    let Some(hooks) = obj.get("webhooks").and_then(Value::as_array) else {
        return Vec::new();
    };
    hooks.iter().map(parse_webhook).collect()
}

fn parse_webhook(h: &Value) -> Webhook {
    let s = |p: &str| h.pointer(p).and_then(Value::as_str);
    let rules = h
        .get("rules")
        .and_then(Value::as_array)
        .map(|rs| {
            rs.iter()
                .map(|r| Rule {
                    operations: strings(r.get("operations")),
                    groups: strings(r.get("apiGroups")),
                    versions: strings(r.get("apiVersions")),
                    resources: strings(r.get("resources")),
                    scope: r
                        .get("scope")
                        .and_then(Value::as_str)
                        .unwrap_or("*")
                        .to_string(),
                })
                .collect()
        })
        .unwrap_or_default();
    let client = match (s("/clientConfig/url"), h.pointer("/clientConfig/service")) {
        (Some(url), None) => ClientConfig::Url(url.to_string()),
        (None, Some(svc)) => {
            let port = svc.get("port").and_then(Value::as_u64).unwrap_or(443);
            ClientConfig::Service {
                namespace: svc
                    .get("namespace")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .into(),
                name: svc.get("name").and_then(Value::as_str).unwrap_or("").into(),
                path: svc
                    .get("path")
                    .and_then(Value::as_str)
                    .unwrap_or("/")
                    .into(),
                port: u16::try_from(port).unwrap_or(443),
            }
        }
        _ => ClientConfig::Invalid(
            "exactly one of clientConfig.url and clientConfig.service must be set".into(),
        ),
    };
    let pool = base64::engine::general_purpose::STANDARD
        .decode(s("/clientConfig/caBundle").unwrap_or(""))
        .map_err(|e| format!("invalid caBundle: {e}"))
        .and_then(|pem| super::client::tls_config(&pem))
        .map(super::pool::Pool::new);
    let empty = || Value::Object(Default::default());
    Webhook {
        name: s("/name").unwrap_or("").to_string(),
        rules,
        namespace_selector: h.get("namespaceSelector").cloned().unwrap_or_else(empty),
        object_selector: h.get("objectSelector").cloned().unwrap_or_else(empty),
        ignore_failure: s("/failurePolicy") == Some("Ignore"),
        timeout: super::client::timeout_of(h.get("timeoutSeconds").and_then(Value::as_i64)),
        dry_run_safe: matches!(s("/sideEffects"), Some("None" | "NoneOnDryRun")),
        reinvoke_if_needed: s("/reinvocationPolicy") == Some("IfNeeded"),
        speaks_v1: strings(h.get("admissionReviewVersions"))
            .iter()
            .any(|v| v == "v1"),
        client,
        pool,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_follow_the_api() {
        let obj = json!({"webhooks": [
            {"name": "a.example.com", "clientConfig": {"service": {"namespace": "ns", "name": "svc"}},
             "admissionReviewVersions": ["v1beta1", "v1"], "sideEffects": "None"},
            {"name": "b.example.com", "clientConfig": {"url": "https://127.0.0.1:1/x", "caBundle": "%%"},
             "failurePolicy": "Ignore", "timeoutSeconds": 3, "reinvocationPolicy": "IfNeeded",
             "sideEffects": "Some", "admissionReviewVersions": ["v1beta1"]}
        ]});
        let hooks = parse_configuration(&obj);
        assert_eq!(hooks.len(), 2);
        let (a, b) = (&hooks[0], &hooks[1]);
        assert_eq!(
            a.client,
            ClientConfig::Service {
                namespace: "ns".into(),
                name: "svc".into(),
                path: "/".into(),
                port: 443
            }
        );
        assert!(!a.ignore_failure && a.dry_run_safe && a.speaks_v1 && !a.reinvoke_if_needed);
        assert_eq!(a.timeout, Duration::from_secs(10));
        assert!(a.pool.is_ok());
        assert!(b.ignore_failure && !b.dry_run_safe && !b.speaks_v1 && b.reinvoke_if_needed);
        assert_eq!(b.timeout, Duration::from_secs(3));
        assert!(b.pool.is_err());
    }

    #[test]
    fn admission_configurations_are_never_admitted() {
        let all = json!({"webhooks": [{"name": "all.example.com", "clientConfig": {"url": "https://127.0.0.1:1/"},
            "rules": [{"apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*/*"], "operations": ["*"]}]}]});
        let snapshot = Snapshot {
            mutating: Vec::new(),
            validating: parse_configuration(&all),
        };
        let registry = crate::registry::Registry::default();
        let lookup = |g: &str, p: &str| registry.lookup(g, "v1", p).expect("served type");
        assert!(snapshot.may_match(&lookup("", "configmaps"), ""));
        assert!(snapshot.may_match(&lookup("", "pods"), "status"));
        let own = lookup(
            "admissionregistration.k8s.io",
            "validatingwebhookconfigurations",
        );
        assert!(!snapshot.may_match(&own, ""));
    }
}
