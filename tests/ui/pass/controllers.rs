//! Controllers in every handler style (level fn, finalizing fn, edge-style impls with and without a
//! finalizer), on built-in kinds and on a custom resource declared after its controller, with every
//! option.

mod ops {
    use std::sync::Arc;

    use piceli::controller::{Action, Context, Controller, Event};
    use piceli::k8s_openapi::api::{apps::v1::Deployment, core::v1::ConfigMap};

    #[derive(kube::CustomResource, serde::Serialize, serde::Deserialize, Clone, Debug, schemars::JsonSchema)]
    #[kube(group = "example.com", version = "v1", kind = "Lamp", namespaced)]
    pub struct LampSpec {
        pub color: String,
    }

    pub async fn reconcile_lamp(_ev: Event<Lamp>, _cx: Context) -> Result<Action, piceli::kube::Error> {
        Ok(Action::await_change())
    }
    pub async fn scale(_d: Arc<Deployment>, _cx: Context) -> Result<Action, String> {
        Ok(Action::requeue(std::time::Duration::from_secs(60)))
    }
    pub struct Audit;
    impl Controller<ConfigMap> for Audit {
        type Error = piceli::kube::Error;
        async fn on_create(&self, _cm: &ConfigMap, _cx: &Context) -> Result<(), Self::Error> {
            Ok(())
        }
    }
}

piceli::app! {
    app lamps;
    target local = local(namespace: "lamps-system");
    operator lamps { image: "ghcr.io/acme/lamps:1.0@sha256:9b2c4d6e8f0a1b3c5d7e9f1a2b4c6d8e0f2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c" }

    controller lamp on lamps.example.com (finalizer) { writes: [status, configmaps] } => ops::reconcile_lamp;
    controller scale on deployments.apps { namespaces: [team-a, team-b], labels: "tier!=cache" } => ops::scale;
    controller audit on configmaps { namespaces: all, labels: { audit: "yes" }, every: "5m" } => ops::Audit;
    controller audit-kept on configmaps (finalizer) => ops::Audit;
    custom_resource crate::ops::Lamp;
}

fn main() -> std::process::ExitCode {
    let _ = lamps::controllers();
    lamps::main()
}
