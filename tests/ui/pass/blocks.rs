//! Schema-checked blocks on every item: pod:, container:, spec:, pod_labels:, pod_annotations:, labels:,
//! annotations:; ConfigMap and Secret data under data: when metadata is given.

const GRACE: i64 = 45;

piceli::app! {
    app demo;

    config_map settings {
        labels: { tier: "web" },
        annotations: { note: "data under data:" },
        data: { MODE: "prod", labels: "a data key named labels" },
    }
    secret db { labels: { tier: "db" }, data: { password: from_env("DB_PASSWORD") } }

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 80 },
        labels: { only: "the-deployment" },
        pod_labels: { tier: "web" },
        pod_annotations: { "prometheus.io/scrape": "true" },
        spec: {
            minReadySeconds: 3,
            revisionHistoryLimit: 5,
            strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: "25%" } },
        },
        pod: {
            terminationGracePeriodSeconds: (GRACE),
            priorityClassName: "high",
            securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: "RuntimeDefault" } },
            tolerations: [{ key: "gpu", operator: "Exists", effect: "NoSchedule" }],
            topologySpreadConstraints: [{
                maxSkew: 1,
                topologyKey: "topology.kubernetes.io/zone",
                whenUnsatisfiable: "ScheduleAnyway",
                labelSelector: { matchLabels: { "app.kubernetes.io/component": "web" } },
            }],
            imagePullSecrets: [{ name: "regcred" }],
        },
        container: {
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
            lifecycle: { preStop: { exec: { command: ["sleep", "5"] } } },
            envFrom: [{ configMapRef: { name: "settings" } }],
            resources: { limits: { cpu: 2, memory: "512Mi" } },
        },
    }

    cron_job report {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        schedule: "0 3 * * *",
        spec: { concurrencyPolicy: "Forbid", timeZone: "Etc/UTC", successfulJobsHistoryLimit: 1 },
        pod: { terminationGracePeriodSeconds: "30s" },
    }

    job migrate {
        containers: {
            main: { image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d", container: { workingDir: "/srv" } },
        },
        spec: { ttlSecondsAfterFinished: 600 },
    }

    service web -> web {
        port: 80 => http,
        labels: { exposure: "internal" },
        spec: { sessionAffinity: "ClientIP", externalTrafficPolicy: "Local", type: "NodePort" },
    }
    ingress web {
        host: "shop.example.com",
        labels: { edge: "yes" },
        paths: { "/": web => http },
        spec: { defaultBackend: { service: { name: "web", port: { number: 80 } } } },
    }
    pvc data { storage: "1Gi", annotations: { backup: "daily" }, spec: { volumeMode: "Filesystem" } }
    autoscaler web -> web { min: 2, max: 5, cpu: 70, spec: { behavior: { scaleDown: { stabilizationWindowSeconds: 300 } } } }
    disruption_budget web -> web { max_unavailable: 1, spec: { unhealthyPodEvictionPolicy: "AlwaysAllow" } }
    network_policy web -> web { from: [namespace("monitoring")], labels: { a: "b" }, spec: { policyTypes: ["Ingress"] } }
    service_account api { annotations: { "eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/api" }, spec: { imagePullSecrets: [{ name: "regcred" }] } }
    role reader { labels: { a: "b" }, rules: [rule(groups: [""], resources: ["pods"], verbs: ["get"])] }
    role_binding reader { role: reader, subjects: [api], annotations: { note: "x" } }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
