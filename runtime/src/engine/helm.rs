//! A Helm release's bookkeeping on the objects an app takes over: the `meta.helm.sh/release-name` and
//! `…/release-namespace` annotations Helm puts on what it installs, and its release records (Secrets
//! `sh.helm.release.v1.NAME.vN`, labelled `owner: helm, name: NAME`). A plan reports them and leaves them
//! alone; `--forget-helm-release NAME` removes Helm's claim as part of the plan: each object's annotations
//! (and a `app.kubernetes.io/managed-by: Helm` label) go with the object's own write, the release Secrets are
//! deleted after every other write succeeded (deletions run last). Both are steps of the journaled release.

use super::diff::Change;
use super::error::EngineError;
use super::plan::{Action, ActionKind, Precondition, level};
use super::target::Connection;
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The annotation naming the release that installed an object.
pub const RELEASE_NAME: &str = "meta.helm.sh/release-name";
/// The annotation naming that release's namespace.
pub const RELEASE_NAMESPACE: &str = "meta.helm.sh/release-namespace";

/// The Helm release that claims a live object, and whether the plan removes the claim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HelmClaim {
    /// The release (`meta.helm.sh/release-name`).
    pub release: String,
    /// `--forget-helm-release` names it: the write removes Helm's annotations (a release Secret: deleted).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub forget: bool,
}

/// One Helm release the plan found, for its summary line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HelmRelease {
    /// The release's name.
    pub name: String,
    /// The app's objects that carry its annotations (`Kind/namespace/name`).
    pub objects: Vec<String>,
    /// Its release Secrets in the target namespace.
    pub secrets: Vec<String>,
    /// Whether this plan removes its claim (`--forget-helm-release`).
    pub forget: bool,
}

impl HelmRelease {
    /// The plan's summary line: what Helm still claims, and whether the plan leaves it or removes it.
    pub fn summary(&self) -> String {
        let secrets = match self.secrets.len() {
            0 => "no release Secret".to_string(),
            1 => "1 release Secret".to_string(),
            n => format!("{n} release Secrets"),
        };
        let what = format!(
            "Helm release {}: {} object(s) carry its annotations, {secrets}",
            self.name,
            self.objects.len()
        );
        if self.forget {
            format!(
                "{what}; this plan removes its claim (`--forget-helm-release {}`)",
                self.name
            )
        } else {
            format!(
                "{what}; left alone (`--forget-helm-release {}` removes Helm's claim)",
                self.name
            )
        }
    }
}

/// The Helm claim on `live`, if it carries Helm's annotation.
pub fn claim(live: &Value, forget: &[String]) -> Option<HelmClaim> {
    let release = live["metadata"]["annotations"][RELEASE_NAME].as_str()?;
    Some(HelmClaim {
        release: release.to_string(),
        forget: forget.iter().any(|f| f == release),
    })
}

/// Helm's release Secrets of `release` in `namespace`: `(name, precondition)`, by name.
async fn release_secrets(
    conn: &Connection,
    namespace: &str,
    release: &str,
    key: &[u8; 32],
) -> Result<Vec<(String, Option<Precondition>)>, EngineError> {
    let api: Api<DynamicObject> = Api::namespaced_with(
        conn.client.clone(),
        namespace,
        &kube::api::ApiResource::erase::<k8s_openapi::api::core::v1::Secret>(&()),
    );
    let lp = ListParams::default().labels(&format!("owner=helm,name={release}"));
    let list = api.list(&lp).await.map_err(|e| {
        EngineError::cluster(format!("listing Helm release {release}'s Secrets"), e)
    })?;
    let mut out: Vec<(String, Option<Precondition>)> = list
        .items
        .into_iter()
        .filter_map(|s| {
            let v = serde_json::to_value(&s).ok()?;
            let name = v["metadata"]["name"].as_str()?.to_string();
            let pre = super::plan::precondition(&v, key);
            Some((name, pre))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// The Helm releases claiming the plan's objects (and those `forget` names): their summary, and, for each
/// forgotten one, the annotations' removal in its objects' diffs (an unchanged object becomes an update)
/// and a deletion of each of its release Secrets appended to `actions`. A release `forget` names that
/// claims nothing and has no Secret is refused (PCL0222).
pub async fn releases(
    conn: &Connection,
    namespace: &str,
    namespace_exists: bool,
    actions: &mut Vec<Action>,
    forget: &[String],
    key: &[u8; 32],
) -> Result<Vec<HelmRelease>, EngineError> {
    let mut names: Vec<String> = actions
        .iter()
        .filter_map(|a| a.helm.as_ref().map(|c| c.release.clone()))
        .chain(forget.iter().cloned())
        .collect();
    names.sort();
    names.dedup();
    let mut out = Vec::new();
    for name in names {
        let forgotten = forget.contains(&name);
        let secrets = if namespace_exists {
            release_secrets(conn, namespace, &name, key).await?
        } else {
            Vec::new()
        };
        let mut objects = Vec::new();
        for a in actions.iter_mut() {
            let Some(claim) = a.helm.as_ref().filter(|c| c.release == name) else {
                continue;
            };
            objects.push(a.key().to_string());
            if claim.forget {
                forget_in_diff(a);
            }
        }
        if forgotten && objects.is_empty() && secrets.is_empty() {
            return Err(EngineError::HelmReleaseNotFound {
                release: name,
                namespace: namespace.to_string(),
            });
        }
        if forgotten {
            for (secret, precondition) in &secrets {
                actions.push(Action {
                    object: crate::identity::ObjectRef::new(
                        "v1",
                        "Secret",
                        Some(namespace),
                        secret,
                    ),
                    action: ActionKind::Delete,
                    level: level("Secret"),
                    diff: Vec::new(),
                    precondition: precondition.clone(),
                    desired_digest: None,
                    take: Vec::new(),
                    reason: Some(format!("it is Helm release {name}'s record")),
                    helm: Some(HelmClaim {
                        release: name.clone(),
                        forget: true,
                    }),
                    propagation: None,
                    rollout: None,
                    rotate: Vec::new(),
                    generated: Vec::new(),
                });
            }
        }
        out.push(HelmRelease {
            name,
            objects,
            secrets: secrets.into_iter().map(|(s, _)| s).collect(),
            forget: forgotten,
        });
    }
    Ok(out)
}

/// The removal of Helm's annotations, in the object's diff; an object that was unchanged is updated.
fn forget_in_diff(a: &mut Action) {
    let Some(claim) = &a.helm else { return };
    a.diff.push(Change {
        path: format!("metadata.annotations.{RELEASE_NAME}"),
        before: Some(Value::String(claim.release.clone())),
        after: None,
    });
    if a.action == ActionKind::Unchanged {
        a.action = ActionKind::Update;
    }
}

/// After the write of an object whose Helm claim the plan removes: drop `meta.helm.sh/*` and a
/// `managed-by: Helm` label (a merge patch; removing what is already gone changes nothing, so a resumed
/// step does it again safely).
pub async fn forget_claim(
    api: &Api<DynamicObject>,
    name: &str,
    written: DynamicObject,
) -> Result<DynamicObject, kube::Error> {
    let patch = forget_patch(&written.metadata);
    if patch.is_null() {
        return Ok(written);
    }
    let params = PatchParams {
        field_manager: Some(super::plan::FIELD_MANAGER.to_string()),
        ..PatchParams::default()
    };
    api.patch(name, &params, &Patch::Merge(&patch)).await
}

/// The merge patch that removes Helm's claim from an object's metadata (`null`: nothing to remove).
fn forget_patch(meta: &kube::api::ObjectMeta) -> Value {
    let mut annotations = serde_json::Map::new();
    for k in meta.annotations.iter().flat_map(|a| a.keys()) {
        if k.starts_with("meta.helm.sh/") {
            annotations.insert(k.clone(), Value::Null);
        }
    }
    let helm_label = meta
        .labels
        .as_ref()
        .and_then(|l| l.get("app.kubernetes.io/managed-by"))
        .is_some_and(|v| v == "Helm");
    if annotations.is_empty() && !helm_label {
        return Value::Null;
    }
    let mut patch = json!({"metadata": {"annotations": annotations}});
    if helm_label {
        patch["metadata"]["labels"] = json!({"app.kubernetes.io/managed-by": null});
    }
    patch
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_is_read_from_the_release_annotation() {
        let live =
            json!({"metadata": {"annotations": {RELEASE_NAME: "shop", RELEASE_NAMESPACE: "shop"}}});
        assert_eq!(
            claim(&live, &["shop".into()]),
            Some(HelmClaim {
                release: "shop".into(),
                forget: true
            })
        );
        assert_eq!(claim(&live, &[]).map(|c| c.forget), Some(false));
        assert_eq!(claim(&json!({"metadata": {}}), &["shop".into()]), None);
    }

    #[test]
    fn forgetting_removes_helms_annotations_and_label_only() {
        let meta: kube::api::ObjectMeta = serde_json::from_value(json!({
            "name": "web",
            "annotations": {RELEASE_NAME: "shop", RELEASE_NAMESPACE: "shop", "team": "a"},
            "labels": {"app.kubernetes.io/managed-by": "Helm", "app": "web"},
        }))
        .expect("meta");
        assert_eq!(
            forget_patch(&meta),
            json!({"metadata": {
                "annotations": {RELEASE_NAME: null, RELEASE_NAMESPACE: null},
                "labels": {"app.kubernetes.io/managed-by": null},
            }})
        );
        let ours: kube::api::ObjectMeta = serde_json::from_value(json!({
            "name": "web", "labels": {"app.kubernetes.io/managed-by": "piceli"},
        }))
        .expect("meta");
        assert_eq!(forget_patch(&ours), Value::Null);
    }

    #[test]
    fn the_summary_says_what_is_left_alone_and_how_to_forget_it() {
        let mut r = HelmRelease {
            name: "shop".into(),
            objects: vec!["Deployment/shop/web".into()],
            secrets: vec!["sh.helm.release.v1.shop.v1".into()],
            forget: false,
        };
        assert_eq!(
            r.summary(),
            "Helm release shop: 1 object(s) carry its annotations, 1 release Secret; left alone \
             (`--forget-helm-release shop` removes Helm's claim)"
        );
        r.forget = true;
        assert!(
            r.summary()
                .ends_with("this plan removes its claim (`--forget-helm-release shop`)")
        );
    }

    #[test]
    fn a_forgotten_unchanged_object_is_updated() {
        let mut a = Action {
            object: crate::identity::ObjectRef::new("v1", "ConfigMap", Some("shop"), "settings"),
            action: ActionKind::Unchanged,
            level: 3,
            diff: vec![],
            precondition: None,
            desired_digest: None,
            take: vec![],
            reason: None,
            helm: Some(HelmClaim {
                release: "shop".into(),
                forget: true,
            }),
            propagation: None,
            rollout: None,
            rotate: Vec::new(),
            generated: Vec::new(),
        };
        forget_in_diff(&mut a);
        assert_eq!(a.action, ActionKind::Update);
        assert_eq!(
            a.diff[0].path,
            "metadata.annotations.meta.helm.sh/release-name"
        );
    }
}
