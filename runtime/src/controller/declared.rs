//! Controllers as `app!` declares them: the handler traits the generated `controllers()` registers
//! through (a mismatch is PCL0069 at the handler) and the options each declaration's model gives (the RBAC
//! `render` derives from the declarations is in `access.rs`, the CRD of a `custom_resource` type in
//! `crd.rs`).

use std::fmt::Display;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use kube::api::ApiResource;
use kube::runtime::controller::Action;
use kube::runtime::finalizer::Event;
use piceli_core::model::{App, ControllerNamespaces, RelatedKind};

use super::backoff::Backoff;
use super::context::{Context, ScopeApi};
use super::handler::Controller;
use super::options::{ControllerOptions, Kind, Namespaces};
use super::registry::Controllers;
use super::run::Watched;

/// Marks a level-based function handler.
pub struct LevelFn<Fut>(std::marker::PhantomData<Fut>);
/// Marks a function handler with a finalizer.
pub struct FinalizeFn<Fut>(std::marker::PhantomData<Fut>);
/// Marks an edge-style [`Controller`] implementation.
pub struct EdgeImpl;

/// A handler for `controller NAME on RESOURCE => handler;` (no finalizer).
#[diagnostic::on_unimplemented(
    message = "PCL0069: `{Self}` is not a controller handler for `{K}`",
    label = "this handler does not reconcile `{K}`",
    note = "a controller handler is `async fn(Arc<{K}>, Context) -> Result<Action, E>` (any `E: Display`), or a unit struct implementing `piceli::controller::Controller<{K}>`",
    note = "a handler that takes `Event<{K}>` (`Event::Apply | Event::Cleanup`) needs a finalizer: declare the controller with `(finalizer)`",
    note = "`{K}` is the type of the resource the controller is declared on; see `piceli explain PCL0069`"
)]
pub trait ReconcileHandler<K, Marker>: Send + Sync + 'static {
    /// Registers the handler.
    fn register(self, c: Controllers, name: &str, options: ControllerOptions) -> Controllers;
}

/// A handler for `controller NAME on RESOURCE (finalizer) => handler;`.
#[diagnostic::on_unimplemented(
    message = "PCL0069: `{Self}` is not a finalizing controller handler for `{K}`",
    label = "with `(finalizer)`, this handler must take `Event<{K}>`",
    note = "with `(finalizer)`, a controller handler is `async fn(Event<{K}>, Context) -> Result<Action, E>` (`Event::Apply(obj) | Event::Cleanup(obj)`), or a unit struct implementing `piceli::controller::Controller<{K}>` (its `on_delete` runs before the object goes)",
    note = "`{K}` is the type of the resource the controller is declared on; see `piceli explain PCL0069`"
)]
pub trait FinalizeHandler<K, Marker>: Send + Sync + 'static {
    /// Registers the handler.
    fn register(self, c: Controllers, name: &str, options: ControllerOptions) -> Controllers;
}

impl<K, F, Fut, E> ReconcileHandler<K, LevelFn<Fut>> for F
where
    K: Watched,
    K::Scope: ScopeApi,
    F: Fn(Arc<K>, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Action, E>> + Send + 'static,
    E: Display + 'static,
{
    fn register(self, c: Controllers, name: &str, options: ControllerOptions) -> Controllers {
        c.reconcile(name, options, self)
    }
}

impl<K, C> ReconcileHandler<K, EdgeImpl> for C
where
    K: Watched,
    K::Scope: ScopeApi,
    C: Controller<K>,
{
    fn register(self, c: Controllers, name: &str, options: ControllerOptions) -> Controllers {
        c.edge(name, options, self)
    }
}

impl<K, F, Fut, E> FinalizeHandler<K, FinalizeFn<Fut>> for F
where
    K: Watched,
    K::Scope: ScopeApi,
    F: Fn(Event<K>, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Action, E>> + Send + 'static,
    E: Display + 'static,
{
    fn register(self, c: Controllers, name: &str, options: ControllerOptions) -> Controllers {
        c.finalize(name, options, self)
    }
}

impl<K, C> FinalizeHandler<K, EdgeImpl> for C
where
    K: Watched,
    K::Scope: ScopeApi,
    C: Controller<K>,
{
    fn register(self, c: Controllers, name: &str, options: ControllerOptions) -> Controllers {
        c.edge(name, options.finalizer(), self)
    }
}

/// Registers `handler` as the app's controller `name` (what the generated `controllers()` calls).
pub fn controller<K, M, H: ReconcileHandler<K, M>>(
    c: Controllers,
    options: ControllerOptions,
    name: &str,
    handler: H,
) -> Controllers {
    handler.register(c, name, options)
}

/// Registers `handler` as the app's finalizing controller `name`.
pub fn finalizing_controller<K, M, H: FinalizeHandler<K, M>>(
    c: Controllers,
    options: ControllerOptions,
    name: &str,
    handler: H,
) -> Controllers {
    handler.register(c, name, options.finalizer())
}

/// The options the declaration `name` gives (defaults when the model has no such controller).
pub fn options(app: &App, name: &str) -> ControllerOptions {
    let Some(decl) = app.controllers.iter().find(|c| c.name.v == name) else {
        return ControllerOptions::default();
    };
    ControllerOptions {
        namespaces: match &decl.namespaces {
            ControllerNamespaces::Operator => Namespaces::Operator,
            ControllerNamespaces::All => Namespaces::All,
            ControllerNamespaces::List(list) => {
                Namespaces::List(list.iter().map(|n| n.v.clone()).collect())
            }
        },
        labels: decl.labels.clone(),
        every: decl.every_ms.map(Duration::from_millis),
        finalizer: decl.finalizer,
        writes: decl.writes.clone(),
        writes_status: decl.writes_status,
        owns: decl.owns.iter().map(|k| kind(app, k)).collect(),
        watches: decl
            .watches
            .iter()
            .map(|(k, m)| (kind(app, k), m.clone()))
            .collect(),
        finalizer_name: decl.finalizer_name.clone(),
        backoff: match decl.backoff_ms {
            Some((base, max)) => {
                Backoff::exponential(Duration::from_millis(base), Duration::from_millis(max))
            }
            None => Backoff::default(),
        },
        ..ControllerOptions::default()
    }
}

/// An owned or watched kind: built-in ones as resolved at compile time; the app's custom resources with
/// their CRD's storage version and scope (the name was checked against the CRDs first, PCL0175).
fn kind(app: &App, k: &RelatedKind) -> Kind {
    let mut kind = Kind {
        resource: ApiResource {
            api_version: api_version(&k.group, &k.version),
            group: k.group.clone(),
            version: k.version.clone(),
            kind: k.kind.clone(),
            plural: k.plural.clone(),
        },
        namespaced: k.namespaced,
    };
    if k.custom
        && let Some(crd) = crate::render::custom_resources(app)
            .into_iter()
            .find(|o| o["metadata"]["name"].as_str() == Some(k.resource.as_str()))
    {
        let versions = crd["spec"]["versions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let storage = versions
            .iter()
            .find(|v| v["storage"] == true)
            .or(versions.first());
        if let Some(v) = storage.and_then(|v| v["name"].as_str()) {
            kind.resource.version = v.to_string();
            kind.resource.api_version = api_version(&k.group, v);
        }
        if let Some(name) = crd["spec"]["names"]["kind"].as_str() {
            kind.resource.kind = name.to_string();
        }
        kind.namespaced = crd["spec"]["scope"] != "Cluster";
    }
    kind
}

fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

#[cfg(test)]
mod tests {
    use super::super::access::declared_access;
    use super::*;
    use piceli_core::Code;
    use piceli_core::Coded;
    use piceli_core::model::ControllerDecl;
    use piceli_core::model::Include;
    use piceli_core::spanned::Spanned;

    fn app(resource: &str) -> App {
        let crd = serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": { "name": "lamps.example.com" },
            "spec": {
                "scope": "Cluster",
                "names": { "kind": "Lamp" },
                "versions": [{ "name": "v1", "storage": false }, { "name": "v2", "storage": true }],
            },
        });
        App {
            includes: vec![Include::objects(piceli_core::spanned::Loc(0), vec![crd])],
            controllers: vec![ControllerDecl {
                name: Spanned::bare("lamp".to_string()),
                resource: Spanned::bare(resource.to_string()),
                group: "example.com".into(),
                plural: "lamps".into(),
                custom: true,
                ..ControllerDecl::default()
            }],
            ..App::default()
        }
    }

    #[test]
    fn owned_and_watched_kinds_a_finalizer_name_and_a_backoff_become_the_options() {
        let mut app = app("lamps.example.com");
        let custom = RelatedKind {
            resource: "lamps.example.com".into(),
            group: "example.com".into(),
            kind: "Lamp".into(),
            plural: "lamps".into(),
            namespaced: true,
            custom: true,
            ..RelatedKind::default()
        };
        let secrets = RelatedKind {
            resource: "secrets".into(),
            version: "v1".into(),
            kind: "Secret".into(),
            plural: "secrets".into(),
            namespaced: true,
            ..RelatedKind::default()
        };
        let c = &mut app.controllers[0];
        c.owns = vec![secrets.clone(), custom];
        c.watches = vec![(secrets, piceli_core::model::OwnerMapping::Name)];
        c.finalizer_name = Some("example.com/cleanup".into());
        c.backoff_ms = Some((50, 2000));
        let o = options(&app, "lamp");
        assert_eq!(o.owns[0].resource.api_version, "v1");
        assert_eq!(o.owns[0].resource.kind, "Secret");
        assert_eq!(
            (
                o.owns[1].resource.api_version.as_str(),
                o.owns[1].namespaced
            ),
            ("example.com/v2", false),
            "a custom kind takes its CRD's storage version and scope"
        );
        assert_eq!(o.watches.len(), 1);
        assert_eq!(o.finalizer_name.as_deref(), Some("example.com/cleanup"));
        assert_eq!(
            o.backoff,
            Backoff::exponential(Duration::from_millis(50), Duration::from_secs(2))
        );
        let access = declared_access(&app, "lamps-system", false).expect("resolves");
        let lamps = access
            .cluster
            .iter()
            .find(|r| r.api_groups == Some(vec!["example.com".into()]))
            .expect("a cluster rule on lamps");
        assert_eq!(lamps.verbs, ["list", "watch"]);
        assert!(
            access.cluster.iter().any(
                |r| r.resources == Some(vec!["secrets".into()]) && r.verbs == ["list", "watch"]
            ),
            "the owner is cluster-scoped, so its children are watched cluster-wide: {access:?}"
        );
    }

    #[test]
    fn a_custom_resource_takes_its_crds_scope_and_a_wrong_name_is_pcl0175() {
        let access = declared_access(&app("lamps.example.com"), "lamps-system", true)
            .expect("the CRD is the app's");
        assert!(
            access
                .cluster
                .iter()
                .any(|r| r.resources == Some(vec!["lamps".into()])),
            "a cluster-scoped CRD's kind is watched cluster-wide: {access:?}"
        );
        let err = declared_access(&app("lamps.example.org"), "lamps-system", true)
            .expect_err("no such CRD");
        assert_eq!(err.code(), Code::CustomResourceMismatch);
        assert!(err.to_string().contains("lamps.example.com"), "{err}");
        assert!(err.help().contains("lamps.example.com"));
    }
}
