//! What a handler gets beside the object: the kube `Client`, typed `Api`s, the reflector `Store` of the
//! watched kind, an event recorder, status and owner-reference helpers, and the operator's namespace.

use std::any::Any;
use std::fmt::Debug;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope};
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::events::{Event as KubeEvent, EventType, Recorder, Reporter};
use kube::runtime::reflector::Store;
use kube::{Client, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// The field manager of status patches made through [`Context::patch_status`].
pub const FIELD_MANAGER: &str = "piceli-controller";

/// How an `Api` is built for a kind's scope: in one namespace for namespaced kinds, cluster-wide for
/// cluster-scoped ones. Implemented for both scopes, so `K::Scope: ScopeApi` holds for every built-in
/// kind and every `#[derive(CustomResource)]` type.
pub trait ScopeApi {
    /// Whether kinds of this scope live in namespaces.
    const NAMESPACED: bool;

    /// An `Api<K>` in `namespace` (ignored for cluster-scoped kinds; `None` = every namespace).
    fn api<K>(client: Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<Scope = Self, DynamicType = ()>;
}

impl ScopeApi for NamespaceResourceScope {
    const NAMESPACED: bool = true;

    fn api<K>(client: Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<Scope = Self, DynamicType = ()>,
    {
        match namespace {
            Some(ns) => Api::namespaced(client, ns),
            None => Api::all(client),
        }
    }
}

impl ScopeApi for ClusterResourceScope {
    const NAMESPACED: bool = false;

    fn api<K>(client: Client, _namespace: Option<&str>) -> Api<K>
    where
        K: Resource<Scope = Self, DynamicType = ()>,
    {
        Api::all(client)
    }
}

/// What every handler of one controller shares.
pub(crate) struct Shared {
    pub client: Client,
    pub operator_namespace: String,
    pub controller: String,
    pub recorder: Recorder,
    /// The reflector `Store<K>` of the watched kind, erased (read back with [`Context::store`]).
    pub store: Box<dyn Any + Send + Sync>,
}

/// A handler's view of the cluster, for one object. Cheap to clone.
#[derive(Clone)]
pub struct Context {
    shared: Arc<Shared>,
    /// The namespace of the object being handled (`None` for cluster-scoped objects).
    namespace: Option<String>,
}

impl Context {
    pub(crate) fn new(shared: Arc<Shared>, namespace: Option<String>) -> Context {
        Context { shared, namespace }
    }

    pub(crate) fn shared(
        client: Client,
        operator_namespace: &str,
        controller: &str,
        instance: Option<String>,
        store: Box<dyn Any + Send + Sync>,
    ) -> Arc<Shared> {
        let reporter = Reporter {
            controller: controller.to_string(),
            instance,
        };
        Arc::new(Shared {
            recorder: Recorder::new(client.clone(), reporter),
            client,
            operator_namespace: operator_namespace.to_string(),
            controller: controller.to_string(),
            store,
        })
    }

    /// The kube client (the operator's ServiceAccount in a pod; the kubeconfig's context otherwise).
    pub fn client(&self) -> Client {
        self.shared.client.clone()
    }

    /// A typed `Api` in the handled object's namespace (cluster-wide for cluster-scoped kinds, and for
    /// a cluster-scoped object handled).
    pub fn api<T>(&self) -> Api<T>
    where
        T: Resource<DynamicType = ()>,
        T::Scope: ScopeApi,
    {
        <T::Scope as ScopeApi>::api(self.client(), self.namespace.as_deref())
    }

    /// A typed `Api` for `obj` itself: in its namespace, or cluster-wide when it is cluster-scoped.
    pub fn api_for<T>(&self, obj: &T) -> Api<T>
    where
        T: Resource<DynamicType = ()>,
        T::Scope: ScopeApi,
    {
        <T::Scope as ScopeApi>::api(self.client(), obj.meta().namespace.as_deref())
    }

    /// A typed `Api` in `namespace`.
    pub fn api_in<T>(&self, namespace: &str) -> Api<T>
    where
        T: Resource<DynamicType = ()>,
        T::Scope: ScopeApi,
    {
        <T::Scope as ScopeApi>::api(self.client(), Some(namespace))
    }

    /// The namespace of the object being handled (`None` when it is cluster-scoped).
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The namespace the operator runs in (its Lease and its own objects live there).
    pub fn operator_namespace(&self) -> &str {
        &self.shared.operator_namespace
    }

    /// The controller's name as declared.
    pub fn controller(&self) -> &str {
        &self.shared.controller
    }

    /// The reflector's cache of the watched kind (every object the controller's watch sees). `None` when
    /// `K` is not the watched kind.
    pub fn store<K>(&self) -> Option<Store<K>>
    where
        K: Resource<DynamicType = ()> + Clone + 'static,
    {
        self.shared.store.downcast_ref::<Store<K>>().cloned()
    }

    /// Records an Event (events.k8s.io/v1) about `obj`: `reason` in UpperCamelCase, `note` for people.
    /// Repeats within a few minutes are folded into one Event's series by kube's recorder.
    pub async fn event<K>(
        &self,
        obj: &K,
        type_: EventType,
        reason: &str,
        note: &str,
    ) -> Result<(), kube::Error>
    where
        K: Resource<DynamicType = ()>,
    {
        let ev = KubeEvent {
            type_,
            reason: reason.to_string(),
            note: Some(note.to_string()),
            action: reason.to_string(),
            secondary: None,
        };
        self.shared
            .recorder
            .publish(&ev, &obj.object_ref(&()))
            .await
    }

    /// Merge-patches `obj`'s status subresource with `status` (the value of `.status`).
    pub async fn patch_status<K>(
        &self,
        obj: &K,
        status: serde_json::Value,
    ) -> Result<K, kube::Error>
    where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Serialize + Debug,
        K::Scope: ScopeApi,
    {
        let name = obj.meta().name.clone().unwrap_or_default();
        let api: Api<K> =
            <K::Scope as ScopeApi>::api(self.client(), obj.meta().namespace.as_deref());
        let patch = serde_json::json!({ "status": status });
        api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
    }

    /// The owner reference that makes a child of `owner` (`controller: true`), so the child is
    /// garbage-collected with it and its changes can be traced back. `blockOwnerDeletion` is left unset:
    /// setting it needs `update` on `<owner kind>/finalizers` where OwnerReferencesPermissionEnforcement
    /// runs, which the derived RBAC does not grant (the operator's own finalizer already holds the owner
    /// until its cleanup ran).
    pub fn owner_ref<K>(owner: &K) -> Option<OwnerReference>
    where
        K: Resource<DynamicType = ()>,
    {
        owner.controller_owner_ref(&())
    }
}
