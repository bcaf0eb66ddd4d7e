//! Workloads and their controllers (namespace `d-wl`): Deployments through rollouts, scaling and undo,
//! ReplicaSets and pods with their generated names, deletion with each propagation policy, Jobs,
//! CronJobs, StatefulSets, DaemonSets, Services and their endpoints, and pod defaults.

use crate::differential::requests::Suite;

fn deployment(name: &str, replicas: u32, image: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: d-wl, labels: {{app: {name}}}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers:
      - name: main
        image: {image}
        ports: [{{containerPort: 80}}]
"
    )
}

const JOB: &str = "apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: d-wl}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox:1.36, command: [\"true\"]}]
";

const CRONJOB: &str = "apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: d-wl}
spec:
  schedule: \"0 3 * * *\"
  suspend: true
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: main, image: busybox:1.36}]
";

const STATEFULSET: &str = "apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: d-wl}
spec:
  serviceName: db
  replicas: 2
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: main, image: postgres:16}]
";

const DAEMONSET: &str = "apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: d-wl}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: main, image: busybox:1.36}]
";

const SERVICE: &str = "apiVersion: v1
kind: Service
metadata: {name: web, namespace: d-wl}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 80}]
";

pub fn add(s: &mut Suite) {
    s.k("create namespace d-wl");
    s.k_until("get serviceaccount default -n d-wl -o name");

    // A Deployment's life.
    s.k_in("apply -f -", &deployment("web", 2, "nginx:1.27"));
    s.k("rollout status deployment/web -n d-wl --timeout=90s");
    s.k("get deployment web -n d-wl");
    s.k("get deployment web -n d-wl -o wide");
    s.k("get deployment web -n d-wl -o json");
    s.k("get replicasets -n d-wl");
    s.k("get replicasets -n d-wl -o wide");
    s.k("get replicasets -n d-wl -l app=web -o json");
    s.k("get pods -n d-wl -l app=web");
    s.k("get pods -n d-wl -l app=web -o wide");
    s.k("get pods -n d-wl -l app=web -o name");
    s.k("get pods -n d-wl -l app=web -o jsonpath={.items[*].metadata.ownerReferences}");
    s.k("get pods -n d-wl -l app=web -o jsonpath={.items[0].spec}");
    s.k("get pods -n d-wl -l app=web -o jsonpath={.items[0].metadata.labels}");
    s.k_in("apply -f -", SERVICE);
    s.k_until("get endpoints web -n d-wl -o jsonpath={.subsets[0].addresses[1].ip}");
    s.k("get endpoints web -n d-wl");
    s.k("get endpointslices -n d-wl -l kubernetes.io/service-name=web -o jsonpath={.items[0].ports}");
    s.k("get deployment web -n d-wl -o jsonpath={.metadata.annotations}");
    s.k("scale deployment web -n d-wl --replicas=3");
    s.k("rollout status deployment/web -n d-wl --timeout=90s");
    s.k("get deployment web -n d-wl");
    s.k("get deployment web -n d-wl -o jsonpath={.status.replicas}/{.status.readyReplicas}/{.status.updatedReplicas}");
    s.k("get --raw /apis/apps/v1/namespaces/d-wl/deployments/web/scale");
    s.k("set image deployment/web -n d-wl main=nginx:1.28");
    s.k("rollout status deployment/web -n d-wl --timeout=90s");
    s.k("rollout history deployment/web -n d-wl");
    s.k("get replicasets -n d-wl -l app=web");
    s.k("rollout undo deployment/web -n d-wl");
    s.k("rollout status deployment/web -n d-wl --timeout=90s");
    s.k("rollout history deployment/web -n d-wl");
    s.k("get deployment web -n d-wl -o jsonpath={.spec.template.spec.containers[0].image}");
    s.k("rollout pause deployment/web -n d-wl");
    s.k("rollout resume deployment/web -n d-wl");
    s.k("get deployment web -n d-wl -o jsonpath={.spec.paused}");
    s.k("scale deployment web -n d-wl --replicas=1 --current-replicas=2");
    s.k("scale deployment missing -n d-wl --replicas=1");
    s.k("delete deployment web -n d-wl --cascade=foreground --timeout=90s");
    s.k("wait --for=delete pods -n d-wl -l app=web --timeout=90s");
    s.k("get replicasets,pods -n d-wl -l app=web -o name");

    // Orphaning and background deletion.
    s.k_in("apply -f -", &deployment("orph", 1, "nginx:1.27"));
    s.k("rollout status deployment/orph -n d-wl --timeout=90s");
    s.k("delete deployment orph -n d-wl --cascade=orphan");
    s.k("get replicasets -n d-wl -l app=orph -o jsonpath={.items[0].metadata.ownerReferences}");
    s.k("get pods -n d-wl -l app=orph");
    s.k("delete replicasets -n d-wl -l app=orph");
    s.k("wait --for=delete pods -n d-wl -l app=orph --timeout=90s");
    s.k_in("apply -f -", &deployment("bg", 1, "nginx:1.27"));
    s.k("rollout status deployment/bg -n d-wl --timeout=90s");
    s.k("delete deployment bg -n d-wl --cascade=background");
    s.k("wait --for=delete pods -n d-wl -l app=bg --timeout=90s");
    s.k("wait --for=delete replicasets -n d-wl -l app=bg --timeout=90s");

    // Jobs and CronJobs (suspended: no pods).
    s.k_in("apply -f -", JOB);
    s.k("get job once -n d-wl -o jsonpath={.spec}");
    s.k("get job once -n d-wl -o jsonpath={.metadata.labels}");
    s.k("get job once -n d-wl");
    s.k_in("apply -f -", CRONJOB);
    s.k("get cronjob nightly -n d-wl -o yaml");
    s.k("get cronjob nightly -n d-wl");
    s.k("create job manual -n d-wl --from=cronjob/nightly --dry-run=server -o jsonpath={.metadata.annotations}");
    s.k("delete job once -n d-wl");

    // A StatefulSet and a DaemonSet.
    s.k_in("apply -f -", STATEFULSET);
    s.k("rollout status statefulset/db -n d-wl --timeout=90s");
    s.k("get statefulset db -n d-wl");
    s.k("get pods -n d-wl -l app=db");
    s.k("get pods db-0 -n d-wl -o jsonpath={.metadata.labels}");
    s.k("get controllerrevisions -n d-wl -o name");
    // Its immutable fields, with kube-apiserver's words (revisionHistoryLimit may change); deleted with
    // `--cascade=orphan` its pods stay, and the StatefulSet created again adopts them.
    let patch = |spec: &str| format!("{{\"spec\":{spec}}}");
    for spec in [
        r#"{"podManagementPolicy":"Parallel"}"#,
        r#"{"revisionHistoryLimit":3}"#,
    ] {
        let body = patch(spec);
        s.k_args(
            &[
                "patch",
                "statefulset",
                "db",
                "-n",
                "d-wl",
                "--type",
                "merge",
                "-p",
                &body,
            ],
            None,
        );
    }
    s.k("delete statefulset db -n d-wl --cascade=orphan");
    s.k("get pods db-0 -n d-wl -o jsonpath={.metadata.ownerReferences}");
    s.k_in("apply -f -", STATEFULSET);
    s.k("wait --for=jsonpath={.metadata.ownerReferences[0].kind}=StatefulSet pod/db-0 -n d-wl --timeout=60s");
    s.k("rollout status statefulset/db -n d-wl --timeout=90s");
    s.k_in("apply -f -", DAEMONSET);
    s.k("rollout status daemonset/agent -n d-wl --timeout=90s");
    s.k("get daemonset agent -n d-wl");
    s.k("get daemonset agent -n d-wl -o jsonpath={.spec}");

    // A bare pod's defaults.
    s.k("run solo -n d-wl --image=nginx:1.27 --labels=app=solo");
    s.k("wait --for=condition=Ready pod/solo -n d-wl --timeout=90s");
    s.k("get pod solo -n d-wl -o jsonpath={.spec}");
    s.k("get pod solo -n d-wl");
    s.k("get pod solo -n d-wl -o jsonpath={.status.phase}");
    s.k("delete pod solo -n d-wl --grace-period=0 --force");
}
