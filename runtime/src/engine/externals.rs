//! `external KIND NAME;` objects: `plan` looks each one up (a warning when it is missing, and the finding
//! recorded in the plan); apply reads them again and refuses a plan whose findings no longer hold. They are
//! never rendered, written, adopted or pruned.

use super::error::{EngineError, ExternalChange};
use super::resources::{Resources, api_for};
use super::target::Connection;
use crate::identity::{ObjectKey, ObjectRef};
use piceli_core::Code;
use piceli_core::model::App;
use serde::{Deserialize, Serialize};

/// What the plan found of one `external` object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requirement {
    /// The object (`v1` kinds in the target namespace), serialized flat as `apiVersion`, `kind`,
    /// `namespace`, `name`.
    #[serde(flatten)]
    pub object: ObjectRef,
    /// Whether it exists.
    pub found: bool,
    /// Its UID when it exists: apply requires the same object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
}

impl Requirement {
    /// `Kind/namespace/name`.
    pub fn key(&self) -> ObjectKey {
        self.object.key()
    }

    /// The warning `plan` prints for a missing one (`None` when it exists).
    pub fn warning(&self) -> Option<String> {
        (!self.found).then(|| {
            format!(
                "warning {}: {} is declared `external` and is not in the cluster: {} until someone makes it",
                Code::ExternalMissing,
                self.key(),
                self.while_missing()
            )
        })
    }

    /// What goes wrong while it is missing, by kind.
    pub fn while_missing(&self) -> &'static str {
        match self.object.kind.as_str() {
            "Secret" => {
                "pods that use it will not start, and an Ingress whose TLS certificate it holds serves none of its own,"
            }
            "ServiceAccount" => "pods that run as it will not be created",
            "PersistentVolumeClaim" => "pods that mount it stay Pending",
            "Service" => "requests that Ingresses route to it fail",
            _ => "pods that use it will not start",
        }
    }
}

/// Look up every `external` object of the app in `namespace` (none exists when the namespace does not).
pub async fn look_up(
    app: &App,
    conn: &Connection,
    resources: &Resources,
    namespace: &str,
    namespace_exists: bool,
) -> Result<Vec<Requirement>, EngineError> {
    let mut out = Vec::with_capacity(app.externals.len());
    for e in &app.externals {
        let kind = e.kind.kind();
        let uid = if namespace_exists {
            read_uid(conn, resources, kind, namespace, &e.name.v).await?
        } else {
            None
        };
        out.push(Requirement {
            object: ObjectRef::new("v1", kind, Some(namespace), &e.name.v),
            found: uid.is_some(),
            uid,
        });
    }
    Ok(out)
}

/// Apply's check: every `external` object is still as the plan found it (there with the same UID, or
/// still missing).
pub async fn recheck(
    conn: &Connection,
    resources: &Resources,
    requires: &[Requirement],
) -> Result<(), EngineError> {
    for r in requires {
        let o = &r.object;
        let namespace = o.namespace.as_deref().unwrap_or_default();
        let uid = read_uid(conn, resources, &o.kind, namespace, &o.name).await?;
        if uid != r.uid {
            let change = match (&r.uid, &uid) {
                (None, Some(_)) => ExternalChange::Appeared,
                (Some(_), None) => ExternalChange::Disappeared,
                _ => ExternalChange::Replaced,
            };
            return Err(EngineError::ExternalChanged {
                object: r.key(),
                change,
            });
        }
    }
    Ok(())
}

async fn read_uid(
    conn: &Connection,
    resources: &Resources,
    kind: &str,
    namespace: &str,
    name: &str,
) -> Result<Option<String>, EngineError> {
    let served = resources
        .served(&conn.client, &crate::identity::gvk("v1", kind))
        .await?;
    let api = api_for(&conn.client, &served, Some(namespace));
    let found = api
        .get_opt(name)
        .await
        .map_err(|e| EngineError::cluster(format!("reading {kind}/{name}"), e))?;
    Ok(found.and_then(|o| o.metadata.uid))
}

#[cfg(test)]
mod tests {
    use super::Requirement;

    fn missing(kind: &str) -> Requirement {
        Requirement {
            object: crate::identity::ObjectRef::new("v1", kind, Some("shop"), "x"),
            found: false,
            uid: None,
        }
    }

    #[test]
    fn the_missing_warning_says_what_each_kind_holds_up() {
        let service = missing("Service").warning().expect("a warning");
        assert!(
            service.ends_with("Service/shop/x is declared `external` and is not in the cluster: requests that Ingresses route to it fail until someone makes it"),
            "{service}"
        );
        assert!(!service.contains("pods"), "{service}");
        let config = missing("ConfigMap").warning().expect("a warning");
        assert!(config.contains("pods that use it will not start until someone makes it"));
        let account = missing("ServiceAccount").warning().expect("a warning");
        assert!(account.contains("pods that run as it will not be created"));
        let claim = missing("PersistentVolumeClaim")
            .warning()
            .expect("a warning");
        assert!(claim.contains("pods that mount it stay Pending"));
        let secret = missing("Secret").warning().expect("a warning");
        assert!(secret.contains("an Ingress whose TLS certificate it holds"));
        let present = Requirement {
            found: true,
            ..missing("Secret")
        };
        assert!(present.warning().is_none());
    }
}
