//! Images built from the workspace: `build(package: …)` with and without `bin`/`base`, `build(self)` for
//! the operator, and targets naming the registry built images go to.

mod policy {
    use piceli::k8s_openapi::api::apps::v1::Deployment;
    use piceli::webhook::{Request, Verdict};

    pub fn allow(_req: Request<Deployment>) -> Verdict {
        Verdict::allow()
    }
}

piceli::app! {
    app shop;
    target local = local(namespace: "shop") { registry: "127.0.0.1:5000/shop" };
    target prod = kubeconfig("prod.kubeconfig", context: "prod", namespace: "shop") { registry: "ghcr.io/acme/shop" };

    deployment api { image: build(package: "shop-api"), ports: { http: 8000 } }
    deployment worker {
        image: build(package: "shop-api", bin: "worker", base: "gcr.io/distroless/cc-debian12@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d"),
    }
    deployment web { image: build(package: "shop-api") }
    operator shop-operator { image: build(self) }
    validate allow on deployments.apps (CREATE) => policy::allow;
}

fn main() -> std::process::ExitCode {
    let app = shop::app();
    let images: Vec<&str> = app.builds.iter().map(|b| b.image.v.as_str()).collect();
    assert_eq!(images[..2], ["build:shop-api", "build:shop-api/worker"]);
    // `build(self)`: the package and binary this app is compiled in.
    assert!(images[2].starts_with("build:piceli-tests"), "{images:?}");
    assert!(app.builds[2].this_app);
    assert_eq!(app.targets[0].registry.as_ref().map(|r| r.v.as_str()), Some("127.0.0.1:5000/shop"));
    std::process::ExitCode::SUCCESS
}
