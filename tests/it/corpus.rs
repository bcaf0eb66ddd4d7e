//! The measure of issue 12: three real multi-object sets from `tests/corpus/` (see each SOURCE.md) written
//! in `app!` without `include`, rendering objects equal field for field to the originals, modulo what
//! Piceli adds to every object (the `app.kubernetes.io/name|component|managed-by` labels, in metadata,
//! selectors and templates, and the namespace) and the `apiVersion`/`kind` k8s-openapi writes into each
//! StatefulSet `volumeClaimTemplates` item (the API accepts both forms).
//!
//! Not compared, and why: guestbook's single files (older copies of the all-in-one's objects, one at
//! `apps/v1beta2`); podinfo's `hpa.yaml` (`autoscaling/v2beta1`, removed in Kubernetes 1.25: its
//! `autoscaling/v2` equivalent is checked instead), `configmap.yaml` (two ConfigMaps in two other
//! namespaces, one named `alexisGooD`, which the API rejects) and `ingress.yaml` (a Traefik CRD).

use piceli::runtime::render::{Options, render};
use serde_json::Value;

piceli::app! {
    app guestbook;

    deployment redis-master {
        replicas: 1,
        containers: {
            master: {
                image: unpinned("registry.k8s.io/redis:e2e"),
                resources: { cpu: "100m", memory: "100Mi" },
                container: { ports: [{ containerPort: 6379 }] },
            },
        },
        pod_labels: { app: "redis", role: "master", tier: "backend" },
        spec: { selector: { matchLabels: { app: "redis", role: "master", tier: "backend" } } },
    }
    service redis-master -> redis-master {
        labels: { app: "redis", tier: "backend", role: "master" },
        spec: {
            ports: [{ port: 6379, targetPort: 6379 }],
            selector: { app: "redis", tier: "backend", role: "master" },
        },
    }
    deployment redis-replica {
        replicas: 2,
        containers: {
            replica: {
                image: unpinned("gcr.io/google_samples/gb-redisslave:v1"),
                resources: { cpu: "100m", memory: "100Mi" },
                env: { GET_HOSTS_FROM: "dns" },
                container: { ports: [{ containerPort: 6379 }] },
            },
        },
        pod_labels: { app: "redis", role: "replica", tier: "backend" },
        spec: { selector: { matchLabels: { app: "redis", role: "replica", tier: "backend" } } },
    }
    service redis-replica -> redis-replica {
        labels: { app: "redis", tier: "backend", role: "replica" },
        spec: {
            ports: [{ port: 6379 }],
            selector: { app: "redis", tier: "backend", role: "replica" },
        },
    }
    deployment frontend {
        replicas: 3,
        containers: {
            php-redis: {
                image: unpinned("gcr.io/google-samples/gb-frontend:v5"),
                resources: { cpu: "100m", memory: "100Mi" },
                env: { GET_HOSTS_FROM: "dns" },
                container: { ports: [{ containerPort: 80 }] },
            },
        },
        pod_labels: { app: "guestbook", tier: "frontend" },
        spec: { selector: { matchLabels: { app: "guestbook", tier: "frontend" } } },
    }
    service frontend -> frontend {
        type: node_port,
        labels: { app: "guestbook", tier: "frontend" },
        spec: { ports: [{ port: 80 }], selector: { app: "guestbook", tier: "frontend" } },
    }
}

piceli::app! {
    app podinfo;

    deployment podinfo {
        containers: {
            podinfod: {
                image: unpinned("ghcr.io/stefanprodan/podinfo:6.1.1"),
                pull_policy: "IfNotPresent",
                ports: {
                    http: port(9898, protocol: "TCP"),
                    http-metrics: port(9797, protocol: "TCP"),
                    grpc: port(9999, protocol: "TCP"),
                },
                command: [
                    "./podinfo", "--port=9898", "--port-metrics=9797", "--grpc-port=9999",
                    "--grpc-service-name=podinfo", "--level=info", "--random-delay=false",
                    "--random-error=false",
                ],
                env: { PODINFO_UI_COLOR: "#34577c" },
                live: exec(["podcli", "check", "http", "localhost:9898/healthz"], initial_delay: 5, timeout: 5),
                ready: exec(["podcli", "check", "http", "localhost:9898/readyz"], initial_delay: 5, timeout: 5),
                resources: {
                    limits: { cpu: "2000m", memory: "512Mi" },
                    requests: { cpu: "100m", memory: "64Mi" },
                },
            },
        },
        pod_labels: { app: "podinfo" },
        pod_annotations: { "prometheus.io/scrape": "true", "prometheus.io/port": "9797" },
        spec: {
            minReadySeconds: 3,
            revisionHistoryLimit: 5,
            progressDeadlineSeconds: 60,
            strategy: { rollingUpdate: { maxUnavailable: 0 }, type: "RollingUpdate" },
            selector: { matchLabels: { app: "podinfo" } },
        },
    }
    service podinfo -> podinfo {
        labels: { test: "1" },
        spec: {
            type: "ClusterIP",
            selector: { app: "podinfo" },
            ports: [
                { name: "http", port: 9898, protocol: "TCP", targetPort: "http" },
                { port: 9999, targetPort: "grpc", protocol: "TCP", name: "grpc" },
            ],
        },
    }
    service podinfo-stable -> podinfo {
        spec: {
            type: "ClusterIP",
            selector: { app: "podinfo" },
            ports: [
                { name: "http", port: 9898, protocol: "TCP", targetPort: "http" },
                { port: 9999, targetPort: "grpc", protocol: "TCP", name: "grpc" },
            ],
        },
    }
    service podinfo-canary -> podinfo {
        spec: {
            type: "ClusterIP",
            selector: { app: "podinfo" },
            ports: [
                { name: "http", port: 9898, protocol: "TCP", targetPort: "http" },
                { port: 9999, targetPort: "grpc", protocol: "TCP", name: "grpc" },
            ],
        },
    }
    // hpa.yaml is autoscaling/v2beta1 (removed in 1.25); this is its autoscaling/v2 form.
    autoscaler podinfo -> podinfo { min: 2, max: 4, cpu: 99 }
}

piceli::app! {
    app mysql;

    config_map mysql {
        labels: { app: "mysql" },
        data: {
            "primary.cnf": "# Apply this config only on the primary.\n[mysqld]\nlog-bin\n# datadir=/var/lib/mysql/mysql\n",
            "replica.cnf": "# Apply this config only on replicas.\n[mysqld]\nsuper-read-only\n# datadir=/var/lib/mysql/mysql\n",
        },
    }
    service mysql -> mysql {
        type: headless,
        ports: { mysql: 3306 },
        labels: { app: "mysql" },
        spec: { selector: { app: "mysql" } },
    }
    service mysql-read -> mysql {
        ports: { mysql: 3306 },
        labels: { app: "mysql", readonly: "true" },
        spec: { selector: { app: "mysql" } },
    }
    stateful_set mysql {
        service: mysql,
        replicas: 3,
        pod_labels: { app: "mysql" },
        spec: { selector: { matchLabels: { app: "mysql" } } },
        init_containers: {
            init-mysql: {
                image: unpinned("mysql:5.7"),
                command: ["bash", "-c", "set -ex\n# Generate mysql server-id from pod ordinal index.\n[[ `hostname` =~ -([0-9]+)$ ]] || exit 1\nordinal=${BASH_REMATCH[1]}\necho [mysqld] > /mnt/conf.d/server-id.cnf\n# Add an offset to avoid reserved server-id=0 value.\necho server-id=$((100 + $ordinal)) >> /mnt/conf.d/server-id.cnf\n# Copy appropriate conf.d files from config-map to emptyDir.\nif [[ $ordinal -eq 0 ]]; then\n  cp /mnt/config-map/primary.cnf /mnt/conf.d/\nelse\n  cp /mnt/config-map/replica.cnf /mnt/conf.d/\nfi\n"],
                mounts: { "/mnt/conf.d": conf, "/mnt/config-map": config-map },
            },
            clone-mysql: {
                image: unpinned("gcr.io/google-samples/xtrabackup:1.0"),
                command: ["bash", "-c", "set -ex\n# Skip the clone if data already exists.\n[[ -d /var/lib/mysql/mysql ]] && exit 0\n# Skip the clone on primary (ordinal index 0).\n[[ `hostname` =~ -([0-9]+)$ ]] || exit 1\nordinal=${BASH_REMATCH[1]}\n[[ $ordinal -eq 0 ]] && exit 0\n# Clone data from previous peer.\nncat --recv-only mysql-$(($ordinal-1)).mysql 3307 | xbstream -x -C /var/lib/mysql\n# Prepare the backup.\nxtrabackup --prepare --target-dir=/var/lib/mysql\n"],
                mounts: { "/var/lib/mysql": volume(data, sub_path: "mysql"), "/etc/mysql/conf.d": conf },
            },
        },
        containers: {
            mysql: {
                image: unpinned("mysql:5.7"),
                env: { MYSQL_ALLOW_EMPTY_PASSWORD: "1" },
                ports: { mysql: 3306 },
                mounts: { "/var/lib/mysql": volume(data, sub_path: "mysql"), "/etc/mysql/conf.d": conf },
                resources: { cpu: "500m", memory: "1Gi" },
                live: exec(["mysqladmin", "ping"], initial_delay: 30, period: 10, timeout: 5),
                ready: exec(["mysql", "-h", "127.0.0.1", "-e", "SELECT 1"], initial_delay: 5, period: 2, timeout: 1),
            },
            xtrabackup: {
                image: unpinned("gcr.io/google-samples/xtrabackup:1.0"),
                ports: { xtrabackup: 3307 },
                command: ["bash", "-c", "set -ex\ncd /var/lib/mysql\n\n# Determine binlog position of cloned data, if any.\nif [[ -f xtrabackup_slave_info && \"x$(<xtrabackup_slave_info)\" != \"x\" ]]; then\n  # XtraBackup already generated a partial \"CHANGE MASTER TO\" query\n  # because we're cloning from an existing replica. (Need to remove the tailing semicolon!)\n  cat xtrabackup_slave_info | sed -E 's/;$//g' > change_master_to.sql.in\n  # Ignore xtrabackup_binlog_info in this case (it's useless).\n  rm -f xtrabackup_slave_info xtrabackup_binlog_info\nelif [[ -f xtrabackup_binlog_info ]]; then\n  # We're cloning directly from primary. Parse binlog position.\n  [[ `cat xtrabackup_binlog_info` =~ ^(.*?)[[:space:]]+(.*?)$ ]] || exit 1\n  rm -f xtrabackup_binlog_info xtrabackup_slave_info\n  echo \"CHANGE MASTER TO MASTER_LOG_FILE='${BASH_REMATCH[1]}',\\\n        MASTER_LOG_POS=${BASH_REMATCH[2]}\" > change_master_to.sql.in\nfi\n\n# Check if we need to complete a clone by starting replication.\nif [[ -f change_master_to.sql.in ]]; then\n  echo \"Waiting for mysqld to be ready (accepting connections)\"\n  until mysql -h 127.0.0.1 -e \"SELECT 1\"; do sleep 1; done\n\n  echo \"Initializing replication from clone position\"\n  mysql -h 127.0.0.1 \\\n        -e \"$(<change_master_to.sql.in), \\\n                MASTER_HOST='mysql-0.mysql', \\\n                MASTER_USER='root', \\\n                MASTER_PASSWORD='', \\\n                MASTER_CONNECT_RETRY=10; \\\n              START SLAVE;\" || exit 1\n  # In case of container restart, attempt this at-most-once.\n  mv change_master_to.sql.in change_master_to.sql.orig\nfi\n\n# Start a server to send backups when requested by peers.\nexec ncat --listen --keep-open --send-only --max-conns=1 3307 -c \\\n  \"xtrabackup --backup --slave-info --stream=xbstream --host=127.0.0.1 --user=root\"\n"],
                mounts: { "/var/lib/mysql": volume(data, sub_path: "mysql"), "/etc/mysql/conf.d": conf },
                resources: { cpu: "100m", memory: "100Mi" },
            },
        },
        volumes: { conf: empty_dir(), config-map: config_map(mysql) },
        volume_claims: { data: { storage: "10Gi", access: ["ReadWriteOnce"] } },
    }
}

/// The labels Piceli puts on everything it renders.
const PICELI_LABELS: &[&str] = &[
    "app.kubernetes.io/name",
    "app.kubernetes.io/component",
    "app.kubernetes.io/managed-by",
];

/// Remove what Piceli adds to every object: its labels (wherever labels or selectors are), the namespace, and
/// the type fields of claim templates.
fn normalize(v: &mut Value) {
    if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("namespace");
    }
    if let Some(Value::Array(claims)) = v.pointer_mut("/spec/volumeClaimTemplates") {
        for claim in claims.iter_mut().filter_map(Value::as_object_mut) {
            claim.remove("apiVersion");
            claim.remove("kind");
        }
    }
    strip(v);
}

fn strip(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for key in ["labels", "matchLabels", "selector"] {
                if let Some(Value::Object(labels)) = map.get_mut(key)
                    && labels.values().all(Value::is_string)
                {
                    for l in PICELI_LABELS {
                        labels.remove(*l);
                    }
                    if labels.is_empty() {
                        map.remove(key);
                    }
                }
            }
            let empty: Vec<String> = map
                .iter()
                .filter(|(k, v)| *k == "metadata" && v.as_object().is_some_and(|m| m.is_empty()))
                .map(|(k, _)| k.clone())
                .collect();
            for k in empty {
                map.remove(&k);
            }
            map.values_mut().for_each(strip);
        }
        Value::Array(items) => items.iter_mut().for_each(strip),
        _ => {}
    }
}

fn originals(files: &[&str]) -> Vec<Value> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    files
        .iter()
        .flat_map(|f| {
            let text = std::fs::read_to_string(dir.join(f)).expect("corpus file");
            serde_saphyr::from_multiple::<Value>(&text).expect("corpus YAML")
        })
        .filter(|o| !o.is_null())
        .collect()
}

/// Every original object has a rendered object of the same kind and name, equal after normalizing both.
fn assert_same(app: &piceli::__private::App, files: &[&str]) -> Vec<Value> {
    let rendered = render(app, &Options::default()).expect("renders").objects;
    for mut want in originals(files) {
        let kind = want["kind"].as_str().unwrap_or_default().to_string();
        let name = want["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let mut got = rendered
            .iter()
            .find(|o| o["kind"] == kind.as_str() && o["metadata"]["name"] == name.as_str())
            .unwrap_or_else(|| panic!("the app renders no {kind} {name}"))
            .clone();
        normalize(&mut got);
        normalize(&mut want);
        assert_eq!(
            got,
            want,
            "{kind} {name} differs:\n--- rendered\n{}\n--- original\n{}",
            serde_json::to_string_pretty(&got).unwrap_or_default(),
            serde_json::to_string_pretty(&want).unwrap_or_default()
        );
    }
    rendered
}

#[test]
fn guestbook_renders_as_the_original() {
    let rendered = assert_same(&guestbook::app(), &["guestbook/guestbook-all-in-one.yaml"]);
    assert_eq!(rendered.len(), 6, "nothing but the six objects");
}

#[test]
fn podinfo_renders_as_the_original() {
    let rendered = assert_same(
        &podinfo::app(),
        &["podinfo/deployment.yaml", "podinfo/service.yaml"],
    );
    let hpa = rendered
        .iter()
        .find(|o| o["kind"] == "HorizontalPodAutoscaler")
        .expect("an HPA");
    assert_eq!(hpa["apiVersion"], "autoscaling/v2");
    assert_eq!(hpa["spec"]["minReplicas"], 2);
    assert_eq!(hpa["spec"]["maxReplicas"], 4);
    assert_eq!(hpa["spec"]["scaleTargetRef"]["name"], "podinfo");
    let metric = &hpa["spec"]["metrics"][0]["resource"];
    assert_eq!(metric["name"], "cpu");
    assert_eq!(metric["target"]["averageUtilization"], 99);
}

#[test]
fn stateful_renders_as_the_original() {
    let rendered = assert_same(
        &mysql::app(),
        &[
            "stateful/mysql-configmap.yaml",
            "stateful/mysql-services.yaml",
            "stateful/mysql-statefulset.yaml",
        ],
    );
    assert_eq!(rendered.len(), 4);
}
