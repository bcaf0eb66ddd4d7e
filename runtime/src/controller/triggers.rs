//! What else triggers a controller besides changes of its own objects: objects of the kinds it owns (a
//! change or deletion reconciles the owner their ownerReferences name, kube's `Controller::owns`) and of
//! the kinds it watches (reconciling the object a label or the name points at, kube's
//! `Controller::watches`). Each is a metadata-only watch, where the controller watches (cluster-wide for
//! cluster-scoped kinds), fed to kube's controller; its deletions trigger too. And a stream of the app's
//! (`reconcile_all_on`) whose every item reconciles every object (kube's `Controller::reconcile_all_on`).

use std::fmt;
use std::sync::Arc;

use futures::StreamExt;
use futures::stream::BoxStream;

use kube::api::{Api, DynamicObject};
use kube::core::PartialObjectMeta;
use kube::runtime::controller::Controller as KubeController;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, ResourceExt};

use super::context::ScopeApi;
use super::options::{ControllerOptions, Kind, OwnerMapping};
use super::run::Watched;

/// The controller with a trigger for each owned and watched kind of `options`; `namespace` is where the
/// controller's own watch is (`None`: every namespace).
pub(crate) fn attach<K: Watched>(
    mut controller: KubeController<K>,
    options: &ControllerOptions,
    client: &Client,
    namespace: Option<&str>,
) -> KubeController<K>
where
    K::Scope: ScopeApi,
{
    for kind in &options.owns {
        let api = api(client, kind, namespace);
        let stream = watcher(api, watcher::Config::default()).touched_objects();
        controller = controller.owns_stream_with(stream, kind.resource.clone());
    }
    for (kind, mapping) in &options.watches {
        let api = api(client, kind, namespace);
        let config = match mapping {
            OwnerMapping::Label(key) => watcher::Config::default().labels(key),
            OwnerMapping::Name => watcher::Config::default(),
        };
        let stream = watcher(api, config).touched_objects();
        let mapping = mapping.clone();
        controller = controller.watches_stream_with(
            stream,
            move |obj| owner_of::<K>(&obj, &mapping),
            kind.resource.clone(),
        );
    }
    if let Some(trigger) = &options.reconcile_all_on {
        controller = controller.reconcile_all_on(trigger.stream());
    }
    controller
}

/// The app's source of "reconcile everything" signals: a function giving a stream of `()`, called for
/// each watch of the controller (each namespace it watches, each leadership term), so every watch has
/// its own stream.
#[derive(Clone)]
pub struct Trigger(Arc<dyn Fn() -> BoxStream<'static, ()> + Send + Sync>);

impl Trigger {
    /// A trigger from a function giving a stream (`fn config_changes() -> impl Stream<Item = ()> +
    /// Send + 'static`).
    pub fn new<F, S>(f: F) -> Trigger
    where
        F: Fn() -> S + Send + Sync + 'static,
        S: futures::Stream<Item = ()> + Send + 'static,
    {
        Trigger(Arc::new(move || f().boxed()))
    }

    /// A new stream of the app's function.
    pub(crate) fn stream(&self) -> BoxStream<'static, ()> {
        (self.0)()
    }
}

impl fmt::Debug for Trigger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Trigger(..)")
    }
}

/// Two triggers are equal when they are the same one.
impl PartialEq for Trigger {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// A metadata-only API for `kind` where the controller watches.
fn api(
    client: &Client,
    kind: &Kind,
    namespace: Option<&str>,
) -> Api<PartialObjectMeta<DynamicObject>> {
    match namespace {
        Some(ns) if kind.namespaced => Api::namespaced_with(client.clone(), ns, &kind.resource),
        _ => Api::all_with(client.clone(), &kind.resource),
    }
}

/// The object of `K` that `obj` names by `mapping`, in `obj`'s namespace when `K` is namespaced.
fn owner_of<K: Watched>(
    obj: &PartialObjectMeta<DynamicObject>,
    mapping: &OwnerMapping,
) -> Option<ObjectRef<K>>
where
    K::Scope: ScopeApi,
{
    let name = match mapping {
        OwnerMapping::Label(key) => obj.labels().get(key)?.clone(),
        OwnerMapping::Name => obj.name_any(),
    };
    let owner = ObjectRef::new(&name);
    match obj.namespace() {
        Some(ns) if <K::Scope as ScopeApi>::NAMESPACED => Some(owner.within(&ns)),
        _ => Some(owner),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    use kube::api::ObjectMeta;
    use std::collections::BTreeMap;

    fn secret(ns: &str, name: &str, labels: &[(&str, &str)]) -> PartialObjectMeta<DynamicObject> {
        let labels: BTreeMap<String, String> = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        PartialObjectMeta {
            types: None,
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(ns.into()),
                labels: Some(labels),
                ..ObjectMeta::default()
            },
            _phantom: Default::default(),
        }
    }

    #[test]
    fn a_label_or_the_name_names_the_owner_in_the_objects_namespace() {
        let s = secret("team-a", "db-creds", &[("app", "shop")]);
        let by_label = owner_of::<ConfigMap>(&s, &OwnerMapping::Label("app".into()));
        assert_eq!(by_label, Some(ObjectRef::new("shop").within("team-a")));
        let by_name = owner_of::<ConfigMap>(&s, &OwnerMapping::Name);
        assert_eq!(by_name, Some(ObjectRef::new("db-creds").within("team-a")));
        assert_eq!(
            owner_of::<ConfigMap>(&s, &OwnerMapping::Label("tier".into())),
            None,
            "no such label: no owner"
        );
        assert_eq!(
            owner_of::<Namespace>(&s, &OwnerMapping::Label("app".into())),
            Some(ObjectRef::new("shop")),
            "a cluster-scoped owner has no namespace"
        );
    }
}
