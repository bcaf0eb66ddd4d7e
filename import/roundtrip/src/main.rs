//! The `corpus` app, imported by `piceli import`.
//!
//! `cargo run -- render` prints its objects; `// piceli:` comments mark what was changed.

piceli::app! {
    app corpus;
    target local = local(namespace: "default");

    service redis-master -> redis-master {
        labels: { app: "redis", tier: "backend", role: "master" },
        port: 6379,
        spec: { selector: { app: "redis", tier: "backend", role: "master" } },
    }

    // piceli: `registry.k8s.io/redis:e2e` is not pinned by digest: pin it (`@sha256:…`) to drop `unpinned`
    deployment redis-master {
        replicas: 1,
        pod_labels: { app: "redis", role: "master", tier: "backend" },
        containers: {
            master: {
                image: unpinned("registry.k8s.io/redis:e2e"),
                ports: [6379],
                resources: { requests: { cpu: "100m", memory: "100Mi" } },
            },
        },
        spec: { selector: { matchLabels: { app: "redis", role: "master", tier: "backend" } } },
    }

    service redis-replica -> redis-replica {
        labels: { app: "redis", tier: "backend", role: "replica" },
        port: 6379,
        spec: { selector: { app: "redis", tier: "backend", role: "replica" } },
    }

    // piceli: `gcr.io/google_samples/gb-redisslave:v1` is not pinned by digest: pin it (`@sha256:…`) to drop `unpinned`
    deployment redis-replica {
        replicas: 2,
        pod_labels: { app: "redis", role: "replica", tier: "backend" },
        containers: {
            replica: {
                image: unpinned("gcr.io/google_samples/gb-redisslave:v1"),
                env: { GET_HOSTS_FROM: "dns" },
                ports: [6379],
                resources: { requests: { cpu: "100m", memory: "100Mi" } },
            },
        },
        spec: { selector: { matchLabels: { app: "redis", role: "replica", tier: "backend" } } },
    }

    service frontend -> frontend {
        labels: { app: "guestbook", tier: "frontend" },
        port: 80,
        type: node_port,
        spec: { selector: { app: "guestbook", tier: "frontend" } },
    }

    // piceli: `gcr.io/google-samples/gb-frontend:v5` is not pinned by digest: pin it (`@sha256:…`) to drop `unpinned`
    deployment frontend {
        replicas: 3,
        pod_labels: { app: "guestbook", tier: "frontend" },
        containers: {
            "php-redis": {
                image: unpinned("gcr.io/google-samples/gb-frontend:v5"),
                env: { GET_HOSTS_FROM: "dns" },
                ports: [80],
                resources: { requests: { cpu: "100m", memory: "100Mi" } },
            },
        },
        spec: { selector: { matchLabels: { app: "guestbook", tier: "frontend" } } },
    }

    // piceli: PCL0183 was in namespace `datadog`, now in the target's `default`
    config_map belalicious {
        data: { key: "value" },
    }

    // piceli: `ghcr.io/stefanprodan/podinfo:6.1.1` is not pinned by digest: pin it (`@sha256:…`) to drop `unpinned`
    deployment podinfo {
        pod_labels: { app: "podinfo" },
        pod_annotations: { "prometheus.io/scrape": "true", "prometheus.io/port": "9797" },
        containers: {
            podinfod: {
                image: unpinned("ghcr.io/stefanprodan/podinfo:6.1.1"),
                command: [
                    "./podinfo",
                    "--port=9898",
                    "--port-metrics=9797",
                    "--grpc-port=9999",
                    "--grpc-service-name=podinfo",
                    "--level=info",
                    "--random-delay=false",
                    "--random-error=false",
                ],
                env: { PODINFO_UI_COLOR: "#34577c" },
                ports: { http: 9898, "http-metrics": 9797, grpc: 9999 },
                resources: {
                    requests: { cpu: "100m", memory: "64Mi" },
                    limits: { cpu: "2000m", memory: "512Mi" },
                },
                ready: exec(["podcli", "check", "http", "localhost:9898/readyz"], initial_delay: 5, timeout: 5),
                live: exec(["podcli", "check", "http", "localhost:9898/healthz"], initial_delay: 5, timeout: 5),
            },
        },
        spec: {
            minReadySeconds: 3,
            revisionHistoryLimit: 5,
            progressDeadlineSeconds: 60,
            strategy: { rollingUpdate: { maxUnavailable: 0 }, type: "RollingUpdate" },
            selector: { matchLabels: { app: "podinfo" } },
        },
    }

    // piceli: PCL0216: HorizontalPodAutoscaler podinfo: autoscaling/v2beta1 is not served since Kubernetes 1.25; converted to autoscaling/v2; 1 metric(s) rewritten to autoscaling/v2's `target:` form
    autoscaler podinfo -> podinfo {
        min: 2,
        max: 4,
        cpu: 99,
    }

    service podinfo -> podinfo {
        labels: { test: "1" },
        ports: { http: 9898 => http, grpc: 9999 => grpc },
        spec: { selector: { app: "podinfo" } },
    }

    service podinfo-stable -> podinfo {
        ports: { http: 9898 => http, grpc: 9999 => grpc },
        spec: { selector: { app: "podinfo" } },
    }

    service podinfo-canary -> podinfo {
        ports: { http: 9898 => http, grpc: 9999 => grpc },
        spec: { selector: { app: "podinfo" } },
    }

    // piceli: label `app.kubernetes.io/name: mysql` dropped: Piceli sets `app.kubernetes.io/name` itself
    config_map mysql {
        labels: { app: "mysql" },
        data: {
            "primary.cnf": r#"# Apply this config only on the primary.
[mysqld]
log-bin
# datadir=/var/lib/mysql/mysql
"#,
            "replica.cnf": r#"# Apply this config only on replicas.
[mysqld]
super-read-only
# datadir=/var/lib/mysql/mysql
"#,
        },
    }

    // piceli: label `app.kubernetes.io/name: mysql` dropped: Piceli sets `app.kubernetes.io/name` itself
    service mysql -> mysql {
        labels: { app: "mysql" },
        ports: { mysql: 3306 },
        spec: { clusterIP: "None", selector: { app: "mysql" } },
    }

    // piceli: label `app.kubernetes.io/name: mysql` dropped: Piceli sets `app.kubernetes.io/name` itself
    service mysql-read -> mysql {
        labels: { app: "mysql", readonly: "true" },
        ports: { mysql: 3306 },
        spec: { selector: { app: "mysql" } },
    }

    // piceli: `gcr.io/google-samples/xtrabackup:1.0` is not pinned by digest: pin it (`@sha256:…`) to drop `unpinned`
    // piceli: `mysql:5.7` is not pinned by digest: pin it (`@sha256:…`) to drop `unpinned`
    stateful_set mysql {
        replicas: 3,
        pod_labels: { app: "mysql" },
        containers: {
            mysql: {
                image: unpinned("mysql:5.7"),
                env: { MYSQL_ALLOW_EMPTY_PASSWORD: "1" },
                ports: { mysql: 3306 },
                resources: { requests: { cpu: "500m", memory: "1Gi" } },
                ready: exec(["mysql", "-h", "127.0.0.1", "-e", "SELECT 1"], initial_delay: 5, period: 2),
                live: exec(["mysqladmin", "ping"], initial_delay: 30, timeout: 5),
                container: {
                    volumeMounts: [
                        { name: "data", mountPath: "/var/lib/mysql", subPath: "mysql" },
                        { name: "conf", mountPath: "/etc/mysql/conf.d" },
                    ],
                },
            },
            xtrabackup: {
                image: unpinned("gcr.io/google-samples/xtrabackup:1.0"),
                command: [
                    "bash",
                    "-c",
                    r#"set -ex
cd /var/lib/mysql

# Determine binlog position of cloned data, if any.
if [[ -f xtrabackup_slave_info && "x$(<xtrabackup_slave_info)" != "x" ]]; then
  # XtraBackup already generated a partial "CHANGE MASTER TO" query
  # because we're cloning from an existing replica. (Need to remove the tailing semicolon!)
  cat xtrabackup_slave_info | sed -E 's/;$//g' > change_master_to.sql.in
  # Ignore xtrabackup_binlog_info in this case (it's useless).
  rm -f xtrabackup_slave_info xtrabackup_binlog_info
elif [[ -f xtrabackup_binlog_info ]]; then
  # We're cloning directly from primary. Parse binlog position.
  [[ `cat xtrabackup_binlog_info` =~ ^(.*?)[[:space:]]+(.*?)$ ]] || exit 1
  rm -f xtrabackup_binlog_info xtrabackup_slave_info
  echo "CHANGE MASTER TO MASTER_LOG_FILE='${BASH_REMATCH[1]}',\
        MASTER_LOG_POS=${BASH_REMATCH[2]}" > change_master_to.sql.in
fi

# Check if we need to complete a clone by starting replication.
if [[ -f change_master_to.sql.in ]]; then
  echo "Waiting for mysqld to be ready (accepting connections)"
  until mysql -h 127.0.0.1 -e "SELECT 1"; do sleep 1; done

  echo "Initializing replication from clone position"
  mysql -h 127.0.0.1 \
        -e "$(<change_master_to.sql.in), \
                MASTER_HOST='mysql-0.mysql', \
                MASTER_USER='root', \
                MASTER_PASSWORD='', \
                MASTER_CONNECT_RETRY=10; \
              START SLAVE;" || exit 1
  # In case of container restart, attempt this at-most-once.
  mv change_master_to.sql.in change_master_to.sql.orig
fi

# Start a server to send backups when requested by peers.
exec ncat --listen --keep-open --send-only --max-conns=1 3307 -c \
  "xtrabackup --backup --slave-info --stream=xbstream --host=127.0.0.1 --user=root"
"#,
                ],
                ports: { xtrabackup: 3307 },
                resources: { requests: { cpu: "100m", memory: "100Mi" } },
                container: {
                    volumeMounts: [
                        { name: "data", mountPath: "/var/lib/mysql", subPath: "mysql" },
                        { name: "conf", mountPath: "/etc/mysql/conf.d" },
                    ],
                },
            },
        },
        init_containers: {
            "init-mysql": {
                image: unpinned("mysql:5.7"),
                command: [
                    "bash",
                    "-c",
                    r#"set -ex
# Generate mysql server-id from pod ordinal index.
[[ `hostname` =~ -([0-9]+)$ ]] || exit 1
ordinal=${BASH_REMATCH[1]}
echo [mysqld] > /mnt/conf.d/server-id.cnf
# Add an offset to avoid reserved server-id=0 value.
echo server-id=$((100 + $ordinal)) >> /mnt/conf.d/server-id.cnf
# Copy appropriate conf.d files from config-map to emptyDir.
if [[ $ordinal -eq 0 ]]; then
  cp /mnt/config-map/primary.cnf /mnt/conf.d/
else
  cp /mnt/config-map/replica.cnf /mnt/conf.d/
fi
"#,
                ],
                mounts: { "/mnt/conf.d": conf, "/mnt/config-map": config-map },
            },
            "clone-mysql": {
                image: unpinned("gcr.io/google-samples/xtrabackup:1.0"),
                command: [
                    "bash",
                    "-c",
                    r#"set -ex
# Skip the clone if data already exists.
[[ -d /var/lib/mysql/mysql ]] && exit 0
# Skip the clone on primary (ordinal index 0).
[[ `hostname` =~ -([0-9]+)$ ]] || exit 1
ordinal=${BASH_REMATCH[1]}
[[ $ordinal -eq 0 ]] && exit 0
# Clone data from previous peer.
ncat --recv-only mysql-$(($ordinal-1)).mysql 3307 | xbstream -x -C /var/lib/mysql
# Prepare the backup.
xtrabackup --prepare --target-dir=/var/lib/mysql
"#,
                ],
                container: {
                    volumeMounts: [
                        { name: "data", mountPath: "/var/lib/mysql", subPath: "mysql" },
                        { name: "conf", mountPath: "/etc/mysql/conf.d" },
                    ],
                },
            },
        },
        volumes: { conf: empty_dir(), "config-map": config_map(mysql) },
        spec: {
            selector: { matchLabels: { app: "mysql" } },
            serviceName: "mysql",
            volumeClaimTemplates: [
                {
                    metadata: { name: "data" },
                    spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "10Gi" } } },
                },
            ],
        },
    }

    cluster_role installer-role {
        rules: [
            rule(groups: ["rbac.authorization.k8s.io"], resources: ["clusterroles"], verbs: ["create"]),
            rule(groups: ["certificates.k8s.io"], resources: ["signers"], verbs: ["approve", "sign"]),
        ],
    }

    cluster_role_binding insaller-binding {
        role: installer-role,
        subjects: [service_account("csr-signer-installer", "installer")],
    }

    network_policy default-deny-ingress {
        pods: {},
        types: ["Ingress"],
    }

    network_policy test-network-policy {
        pods: { role: "db" },
        types: ["Ingress", "Egress"],
        ingress: [
            {
                from: [
                    cidr("172.17.0.0/16", except: ["172.17.1.0/24"]),
                    namespaces({ project: "myproject" }),
                    pods({ role: "frontend" }),
                ],
                ports: [port(6379, protocol: "TCP")],
            },
        ],
        egress: [{ to: [cidr("10.0.0.0/24")], ports: [port(5978, protocol: "TCP")] }],
    }

    // piceli: PCL0183 was in namespace `csr-signer-installer`, now in the target's `default`
    service_account installer;

    role pod-reader {
        rules: [rule(groups: [""], resources: ["pods"], verbs: ["get", "watch", "list"])],
    }

    role_binding read-pods {
        role: pod-reader,
        subjects: [user("jane")],
    }

    // piceli: kept as they are (no first-class item fits): IngressRoute podinfo-ingressroute
    include json("k8s/corpus.json");

    // piceli: PCL0182 ConfigMap alexisGooD left out, its name is not a valid ConfigMap name: name `alexisGooD` contains uppercase letter 'G':
    // {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"alexisGooD","namespace":"main"},"data":{"key":"value"}}
}

fn main() -> std::process::ExitCode {
    corpus::main()
}
