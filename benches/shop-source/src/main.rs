//! A shop-sized app deployed from source (issue 17's benchmark, `benches/scripts/deploy-source.sh BIN
//! RUNS shop-source`): five workloads whose four images `deploy` builds from the packages of the workspace it is
//! given (`--workspace benches/shop-source/fixture`), with the Services, config, Secret, autoscaler,
//! budgets, storage, RBAC, Ingress and policy a shop has (the admin Deployment runs the API's image).
//! `render` shows each image as `build:PACKAGE` until it is delivered.

piceli::app! {
    app shop-source;
    target local = local(namespace: "shop-source") { registry: "127.0.0.1:5000/shop-source" };

    labels { team: "commerce" }

    config_map settings { LOG_LEVEL: "info", CURRENCY: "EUR" }
    secret session { key: generated(length: 48) }
    pvc uploads { storage: "1Gi", access: ["ReadWriteOnce"] }
    service_account api;
    role config-reader {
        rules: [rule(groups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch"])],
    }
    role_binding api-reads-config { role: config-reader, subjects: [api] }

    deployment api {
        image: build(package: "shop-api"),
        replicas: 2,
        ports: { http: 8000 },
        env: { LOG_LEVEL: config(settings.LOG_LEVEL), SESSION_KEY: secret(session.key) },
        resources: { requests: { cpu: "100m", memory: "64Mi" }, limits: { memory: "128Mi" } },
        service_account: api,
        volumes: { uploads: pvc(uploads) },
        mounts: { "/var/uploads": uploads },
    }
    deployment web {
        image: build(package: "shop-web"),
        replicas: 2,
        ports: { http: 8080 },
        env: { CURRENCY: config(settings.CURRENCY) },
        resources: { cpu: "50m", memory: "32Mi" },
    }
    deployment worker {
        image: build(package: "shop-worker"),
        replicas: 1,
        env: { LOG_LEVEL: config(settings.LOG_LEVEL) },
        resources: { cpu: "50m", memory: "32Mi" },
    }
    cron_job report {
        schedule: "30 2 * * *",
        image: build(package: "shop-report"),
        resources: { cpu: "50m", memory: "32Mi" },
    }

    deployment admin {
        image: build(package: "shop-api"),
        args: ["admin"],
        replicas: 1,
        env: { SESSION_KEY: secret(session.key) },
        resources: { cpu: "50m", memory: "32Mi" },
    }

    service api -> api { port: 80 => http }
    service web -> web { port: 80 => http }
    ingress shop { host: "shop.example.com", paths: { "/": web => http, "/api": api => http } }
    network_policy api-from-web -> api { from: [web], ports: [http] }
    autoscaler api -> api { min: 2, max: 6, cpu: 70 }
    disruption_budget api -> api { min_available: 1 }
    disruption_budget web -> web { max_unavailable: "50%" }
}

fn main() -> std::process::ExitCode {
    shop_source::main()
}
