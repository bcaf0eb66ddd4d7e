//! The lamps operator: the controllers of issue 15's contract, run by this binary's `serve`. `lamps
//! render` prints the Lamp CRD (from the Rust type), the operator's ServiceAccount, the Role/ClusterRole
//! derived from the controller declarations, its Deployment, and the Lamp it ships with (applied after
//! the CRD the same plan creates).

piceli::app! {
    app lamps;
    target local = local(namespace: "lamps-system");
    operator lamps {
        image: "ghcr.io/acme/lamps:1.0@sha256:9b2c4d6e8f0a1b3c5d7e9f1a2b4c6d8e0f2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c",
        replicas: 2,
    }

    custom_resource crate::ops::Lamp;
    include objects((ops::shipped()));
    controller lamp on lamps.example.com (finalizer) { writes: [status, configmaps], owns: [configmaps] } => ops::reconcile_lamp;
    controller audit on configmaps { namespaces: all, labels: { audit: "yes" }, every: "5m" } => ops::Audit;
}

fn main() -> std::process::ExitCode {
    lamps::main()
}

mod ops;

#[cfg(test)]
mod tests {
    /// The RBAC `render` derives from the declarations is exactly what the registered controllers ask
    /// for at run time (from their object types' scopes): nothing missing, nothing extra.
    #[test]
    fn rendered_rbac_is_what_the_running_controllers_need() {
        let rendered =
            piceli::controller::declared_access(&super::lamps::app(), "lamps-system", true)
                .expect("the declarations resolve");
        assert_eq!(
            rendered,
            super::lamps::controllers().access("lamps-system", true)
        );
        assert!(!rendered.cluster.is_empty() && !rendered.namespaced.is_empty());
    }
}
