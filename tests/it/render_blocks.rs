//! Schema-checked blocks render merged under what the DSL generates (the DSL wins where it sets a field),
//! the output parses back into k8s-openapi types, and a snapshot keeps the whole YAML.

use piceli::k8s_openapi::api::{apps, batch, core};
use piceli::runtime::render::{Options, render, to_yaml};
use serde_json::Value;

const GRACE: i64 = 45;

piceli::app! {
    app blocks;

    config_map settings { labels: { tier: "web" }, data: { MODE: "prod", labels: "data" } }

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        replicas: 2,
        ports: { http: 80 },
        env: { MODE: "prod" },
        labels: { only: "deployment" },
        pod_labels: { tier: "web" },
        pod_annotations: { "prometheus.io/scrape": "true" },
        spec: {
            minReadySeconds: 3,
            strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0 } },
            selector: { matchLabels: { tier: "web" } },
        },
        pod: {
            terminationGracePeriodSeconds: (GRACE),
            securityContext: { runAsNonRoot: true, runAsUser: 1000 },
            tolerations: [{ key: "gpu", operator: "Exists", effect: "NoSchedule" }],
            volumes: [{ name: "cache", emptyDir: { medium: "Memory" } }],
        },
        container: {
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
            envFrom: [{ configMapRef: { name: "settings" } }],
            resources: { limits: { cpu: 2, memory: "512Mi" } },
            volumeMounts: [{ name: "cache", mountPath: "/cache" }],
        },
    }

    cron_job report {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        schedule: "0 3 * * *",
        spec: {
            concurrencyPolicy: "Forbid",
            jobTemplate: { spec: { ttlSecondsAfterFinished: 600 } },
        },
        pod: { terminationGracePeriodSeconds: "30s" },
    }

    service web -> web {
        port: 80 => http,
        spec: { sessionAffinity: "ClientIP", selector: { tier: "web" } },
    }
    service_account api { annotations: { "example.com/role": "api" }, spec: { imagePullSecrets: [{ name: "regcred" }] } }
}

piceli::app! {
    app shortcuts;

    config_map settings { MODE: "prod" }
    secret db { password: from_env("DB_PASSWORD") }
    deployment api {
        ports: { http: 8080 },
        ready: http_get("/ready", port: http, headers: { "X-Probe": "yes" }),
        env_from: [config(settings), secret(db)],
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        grace: "1m",
        priority: "high",
        pull_secrets: [regcred],
        security: restricted,
        spread: [zones, hosts],
        strategy: rolling(max_surge: 1, max_unavailable: "25%"),
        pod: { securityContext: { runAsUser: 1000 } },
    }
    service api -> api { port: 80 => http }
    secret tls { type: "kubernetes.io/tls", "tls.crt": from_file("tls.crt"), "tls.key": from_file("tls.key") }
    ingress edge {
        class: "nginx",
        tls: tls,
        path_type: "ImplementationSpecific",
        rules: {
            "a.example.com": { "/": api => http },
            "b.example.com": { "/api": api => 80, "/health": api },
        },
    }
    stateful_set db {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        strategy: rolling(partition: 1),
    }
}

#[test]
fn shortcuts_render_their_api_fields() {
    let objects = render(&shortcuts::app(), &Options::default())
        .expect("renders")
        .objects;
    let d: apps::v1::Deployment =
        serde_json::from_value(find(&objects, "Deployment", "api").clone()).expect("a Deployment");
    let spec = d.spec.expect("spec");
    let strategy = spec.strategy.expect("strategy");
    assert_eq!(strategy.type_.as_deref(), Some("RollingUpdate"));
    let rolling = strategy.rolling_update.expect("rolling update");
    assert_eq!(
        rolling.max_surge,
        Some(piceli::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(1))
    );
    let pod = spec.template.spec.expect("pod");
    assert_eq!(pod.termination_grace_period_seconds, Some(60));
    assert_eq!(pod.priority_class_name.as_deref(), Some("high"));
    assert_eq!(
        pod.image_pull_secrets.expect("pull secrets")[0].name,
        "regcred"
    );
    let sc = pod.security_context.expect("pod security context");
    assert_eq!(sc.run_as_non_root, Some(true));
    assert_eq!(sc.run_as_user, Some(1000), "the block adds to the profile");
    assert_eq!(
        sc.seccomp_profile.map(|p| p.type_).as_deref(),
        Some("RuntimeDefault")
    );
    let c = pod.containers[0]
        .security_context
        .clone()
        .expect("container security context");
    assert_eq!(c.allow_privilege_escalation, Some(false));
    let spread = pod.topology_spread_constraints.expect("spread");
    let keys: Vec<&str> = spread.iter().map(|s| s.topology_key.as_str()).collect();
    assert_eq!(
        keys,
        ["topology.kubernetes.io/zone", "kubernetes.io/hostname"]
    );
    let ing: piceli::k8s_openapi::api::networking::v1::Ingress =
        serde_json::from_value(find(&objects, "Ingress", "edge").clone()).expect("an Ingress");
    let spec = ing.spec.expect("spec");
    let rules = spec.rules.expect("rules");
    let hosts: Vec<&str> = rules.iter().filter_map(|r| r.host.as_deref()).collect();
    assert_eq!(hosts, ["a.example.com", "b.example.com"]);
    let b_paths = &rules[1].http.as_ref().expect("http").paths;
    assert_eq!(b_paths.len(), 2);
    assert_eq!(b_paths[0].path_type, "ImplementationSpecific");
    assert_eq!(
        spec.tls.expect("tls")[0].hosts.as_ref().map(Vec::len),
        Some(2)
    );
    let s: apps::v1::StatefulSet =
        serde_json::from_value(find(&objects, "StatefulSet", "db").clone()).expect("a StatefulSet");
    let update = s
        .spec
        .expect("spec")
        .update_strategy
        .expect("update strategy");
    assert_eq!(update.rolling_update.and_then(|r| r.partition), Some(1));
}

fn objects() -> Vec<Value> {
    render(&blocks::app(), &Options::default())
        .expect("renders")
        .objects
}

fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

#[test]
fn deployment_blocks_merge_under_the_dsl_and_parse_back() {
    let objects = objects();
    let d: apps::v1::Deployment =
        serde_json::from_value(find(&objects, "Deployment", "web").clone()).expect("a Deployment");
    let labels = d.metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels.get("only").map(String::as_str), Some("deployment"));
    let spec = d.spec.expect("spec");
    assert_eq!(spec.replicas, Some(2));
    assert_eq!(spec.min_ready_seconds, Some(3));
    let strategy = spec.strategy.expect("strategy");
    assert_eq!(strategy.type_.as_deref(), Some("RollingUpdate"));
    // A selector written in `spec:` is the selector, exactly: none of Piceli's labels are added to it
    // (an object that already runs keeps its immutable selector), nor to its pods.
    let selector = spec.selector.match_labels.expect("match labels");
    assert_eq!(
        selector,
        std::collections::BTreeMap::from([("tier".to_string(), "web".to_string())])
    );
    let meta = spec.template.metadata.expect("template metadata");
    let pod_labels = meta.labels.expect("pod labels");
    assert_eq!(
        pod_labels,
        std::collections::BTreeMap::from([("tier".to_string(), "web".to_string())])
    );
    assert!(
        !pod_labels.contains_key("only"),
        "workload labels stay on the workload"
    );
    assert_eq!(
        meta.annotations
            .expect("pod annotations")
            .get("prometheus.io/scrape")
            .map(String::as_str),
        Some("true")
    );
    let pod = spec.template.spec.expect("pod spec");
    assert_eq!(pod.termination_grace_period_seconds, Some(45));
    assert_eq!(pod.security_context.and_then(|s| s.run_as_user), Some(1000));
    let tolerations = pod.tolerations.expect("tolerations");
    assert_eq!(tolerations[0].operator.as_deref(), Some("Exists"));
    assert_eq!(pod.volumes.expect("volumes")[0].name, "cache");
    let c = &pod.containers[0];
    assert_eq!(c.name, "web");
    assert!(c.image.as_deref().is_some_and(|i| i.contains("@sha256:")));
    let caps = c
        .security_context
        .as_ref()
        .and_then(|s| s.capabilities.clone());
    assert_eq!(caps.and_then(|c| c.drop), Some(vec!["ALL".to_string()]));
    let limits = c
        .resources
        .as_ref()
        .and_then(|r| r.limits.clone())
        .expect("limits");
    assert_eq!(limits.get("cpu").map(|q| q.0.as_str()), Some("2"));
    assert_eq!(c.env.as_ref().map(|e| e[0].name.as_str()), Some("MODE"));
    assert_eq!(c.env_from.as_ref().map(Vec::len), Some(1));
    assert_eq!(
        c.volume_mounts.as_ref().map(|m| m[0].mount_path.as_str()),
        Some("/cache")
    );
    assert_eq!(c.ports.as_ref().map(|p| p[0].container_port), Some(80));
}

#[test]
fn cron_job_service_and_service_account_blocks_parse_back() {
    let objects = objects();
    let cron: batch::v1::CronJob =
        serde_json::from_value(find(&objects, "CronJob", "report").clone()).expect("a CronJob");
    let spec = cron.spec.expect("spec");
    assert_eq!(spec.concurrency_policy.as_deref(), Some("Forbid"));
    let job = spec.job_template.spec.expect("job spec");
    assert_eq!(job.ttl_seconds_after_finished, Some(600));
    let pod = job.template.spec.expect("pod");
    assert_eq!(pod.termination_grace_period_seconds, Some(30));
    assert_eq!(pod.restart_policy.as_deref(), Some("Never"));

    let svc: core::v1::Service =
        serde_json::from_value(find(&objects, "Service", "web").clone()).expect("a Service");
    let spec = svc.spec.expect("spec");
    assert_eq!(spec.session_affinity.as_deref(), Some("ClientIP"));
    assert_eq!(spec.ports.expect("ports")[0].port, 80);
    // Written in `spec:`: exactly as written.
    assert_eq!(
        spec.selector.expect("selector"),
        std::collections::BTreeMap::from([("tier".to_string(), "web".to_string())])
    );

    let sa: core::v1::ServiceAccount =
        serde_json::from_value(find(&objects, "ServiceAccount", "api").clone()).expect("an SA");
    assert_eq!(
        sa.image_pull_secrets.expect("pull secrets")[0].name,
        "regcred"
    );
    assert!(
        sa.metadata
            .annotations
            .expect("annotations")
            .contains_key("example.com/role")
    );

    let cm: core::v1::ConfigMap =
        serde_json::from_value(find(&objects, "ConfigMap", "settings").clone())
            .expect("a ConfigMap");
    assert_eq!(
        cm.data.expect("data").get("labels").map(String::as_str),
        Some("data")
    );
    assert_eq!(
        cm.metadata
            .labels
            .expect("labels")
            .get("tier")
            .map(String::as_str),
        Some("web")
    );
}

#[test]
fn blocks_snapshot() {
    insta::assert_snapshot!("blocks_render", to_yaml(&objects()).expect("yaml"));
}

piceli::app! {
    app referring;
    target local = local(namespace: "shop");
    include yaml("tests/fixtures/included-api.yaml");
    service api -> api { port: 80 => http }
    autoscaler api -> api { min: 2, max: 6, cpu: 70 }
    disruption_budget api -> api { min_available: 1 }
    network_policy api-ingress -> api { from: [namespace("monitoring")], ports: [http] }
}

#[test]
fn items_refer_to_a_workload_of_an_included_file_by_its_own_selector() {
    let objects = render(&referring::app(), &Options::default())
        .expect("renders")
        .objects;
    let find = |kind: &str, name: &str| {
        objects
            .iter()
            .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("{kind}/{name}"))
    };
    let service: core::v1::Service =
        serde_json::from_value(find("Service", "api").clone()).expect("a Service");
    let spec = service.spec.expect("spec");
    assert_eq!(
        spec.selector,
        Some([("app".to_string(), "api".to_string())].into()),
        "the included Deployment's own selector, not Piceli's labels"
    );
    assert_eq!(
        spec.ports.expect("ports")[0].target_port,
        Some(
            piceli::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(
                "http".into()
            )
        )
    );
    let hpa = find("HorizontalPodAutoscaler", "api");
    assert_eq!(hpa["spec"]["scaleTargetRef"]["kind"], "Deployment");
    assert_eq!(hpa["spec"]["scaleTargetRef"]["name"], "api");
    let pdb = find("PodDisruptionBudget", "api");
    assert_eq!(
        pdb["spec"]["selector"]["matchLabels"],
        serde_json::json!({"app": "api"})
    );
    let policy = find("NetworkPolicy", "api-ingress");
    assert_eq!(
        policy["spec"]["podSelector"]["matchLabels"],
        serde_json::json!({"app": "api"})
    );
    // The included Deployment itself is rendered as written (in the target's namespace).
    let deployment = find("Deployment", "api");
    assert_eq!(deployment["spec"]["replicas"], 2);
    assert_eq!(deployment["metadata"]["namespace"], "shop");
}
