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
    /// The object (in the target namespace), serialized flat as `apiVersion`, `kind`,
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
            "Gateway" => "the routes that attach to it carry no traffic",
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
        let object = ObjectRef::new(
            e.kind.api_version(),
            e.kind.kind(),
            Some(namespace),
            &e.name.v,
        );
        let uid = if namespace_exists {
            read_uid(conn, resources, &object).await?
        } else {
            None
        };
        out.push(Requirement {
            object,
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
        let uid = read_uid(conn, resources, &r.object).await?;
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

/// The UID of the object, `None` when it is not there — or when the cluster does not serve its kind (an
/// `external gateway` where the Gateway API is not installed: nothing can attach to it either).
async fn read_uid(
    conn: &Connection,
    resources: &Resources,
    object: &ObjectRef,
) -> Result<Option<String>, EngineError> {
    let served = match resources.served(&conn.client, &object.gvk()).await {
        Ok(served) => served,
        Err(EngineError::UnknownKind { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    let api = api_for(&conn.client, &served, object.namespace.as_deref());
    let found = api
        .get_opt(&object.name)
        .await
        .map_err(|e| EngineError::cluster(format!("reading {}/{}", object.kind, object.name), e))?;
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
        let gateway = Requirement {
            object: crate::identity::ObjectRef::new(
                "gateway.networking.k8s.io/v1",
                "Gateway",
                Some("shop"),
                "public",
            ),
            ..missing("Gateway")
        };
        assert!(
            gateway
                .warning()
                .expect("a warning")
                .contains("Gateway/shop/public is declared `external` and is not in the cluster: the routes that attach to it carry no traffic"),
        );
        let present = Requirement {
            found: true,
            ..missing("Secret")
        };
        assert!(present.warning().is_none());
    }
}
