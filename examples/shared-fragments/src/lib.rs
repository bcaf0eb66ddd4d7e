//! Fragments the shop's apps share. Each app splices them with `use shared_fragments::NAME`, and the
//! macro checks them in each app as if written there (a mistake here is reported here, for every app).

piceli::fragment! {
    /// Labels on every object of the team's apps, and the logging settings the sidecar reads.
    pub team {
        labels { team: "shop", "app.kubernetes.io/part-of": "shop" }
        config_map logging { LOG_FORMAT: "json", LOG_DIR: "/logs" }
    }
}

piceli::fragment! {
    /// The sidecar that ships `/logs` (a volume named `logs` the app declares), as a `containers:` entry.
    pub log_shipper {
        log-shipper: {
            image: "docker.io/library/busybox:1.36@sha256:768e5c6f5cb6db0794eec98dc7a967f40631746c32232b78a3105fb946f3ab83",
            command: ["sh", "-c", "touch /logs/app.log && tail -F /logs/app.log"],
            env_from: [config(logging)],
            resources: { cpu: "10m", memory: "16Mi" },
            mounts: { "/logs": volume(logs, read_only: true) },
        },
    }
}

piceli::fragment! {
    /// The Gateway API as the platform team runs it: the HTTPRoute CRD the routes are checked against
    /// (the copy vendored at the workspace's `tests/crds/`; the path is relative to this crate, whichever
    /// crate uses the fragment; the team installs it, so `plan` requires the cluster to serve it) and the
    /// team's shared Gateway `public`, which someone else makes.
    pub gateway_api {
        crds "../../tests/crds/gateway.networking.k8s.io_httproutes.yaml";
        external gateway public;
    }
}
