//! The guard operator: the admission webhooks of issue 14's contract, served by this binary's `serve`
//! (`guard render` prints the operator's Deployment, RBAC, Service, webhook configurations,
//! cert-manager objects and the CRD of its own `Tenant` resource; `guard render --containerfile` the
//! image that runs it).

piceli::app! {
    app guard;
    target local = local(namespace: "guard-system");

    operator guard {
        image: "ghcr.io/acme/guard:1.0@sha256:4f2a6b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a",
        replicas: 2,
        tls: cert_manager(issuer: self_signed),
    }
    validate no-latest-tag on deployments.apps (CREATE, UPDATE) => policy::no_latest_tag;
    mutate inject-label on pods (CREATE) => policy::inject_label;
    mutate pod-defaults on pods (CREATE) => [policy::add_team, policy::add_tier];
    validate no-secrets on configmaps (CREATE, UPDATE) { failure: ignore, timeout: 5, namespaces: { team: "a" } }
        => policy::NoSecrets;

    // The app's own custom resource: its CRD is rendered from the Rust type, and its webhooks take
    // `Request<Tenant>`.
    custom_resource crate::policy::Tenant;
    validate tenant-owner on tenants.guard.example.com (CREATE, UPDATE) => policy::tenant_has_owner;
    mutate tenant-defaults on tenants.guard.example.com (CREATE) => policy::tenant_defaults;
}

fn main() -> std::process::ExitCode {
    guard::main()
}

mod policy;
