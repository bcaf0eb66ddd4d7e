//! `kubectl get` tables as kube-apiserver 1.33 prints them: pods `-o wide`, nodes, events,
//! cronjobs, and a custom resource's `date` printer columns shown as ages.

use crate::common::{self, Kubectl, eventually};

/// The words of a table's header line.
fn header(out: &str) -> String {
    out.lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The cells of the row that starts with `name`, split on runs of two or more spaces.
fn row(out: &str, name: &str) -> Vec<String> {
    let line = out
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no row {name} in\n{out}"));
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn kubectl_get_pods_wide_shows_ip_node_nominated_node_and_readiness_gates() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    k.ok(&["run", "web", "--image=nginx"]);
    let out = eventually("the pod running with an IP", 20, || {
        let out = k.ok(&["get", "pods", "-o", "wide"]);
        out.contains("Running").then_some(out)
    });
    assert_eq!(
        header(&out),
        "NAME READY STATUS RESTARTS AGE IP NODE NOMINATED NODE READINESS GATES",
        "{out}"
    );
    let cells = row(&out, "web");
    let ip = k.ok(&["get", "pod", "web", "-o", "jsonpath={.status.podIP}"]);
    assert!(!ip.is_empty());
    assert_eq!(cells[5], ip, "{out}");
    assert_eq!(cells[6], "piceli-sim-node", "{out}");
    assert_eq!(cells[7..], ["<none>", "<none>"], "{out}");
    // The narrow table leaves the priority-1 columns out.
    assert_eq!(
        header(&k.ok(&["get", "pods"])),
        "NAME READY STATUS RESTARTS AGE"
    );
}

#[test]
fn kubectl_get_nodes_shows_status_roles_age_version() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    let out = eventually("the node Ready", 20, || {
        let out = k.ok(&["get", "nodes"]);
        out.contains("Ready").then_some(out)
    });
    assert_eq!(header(&out), "NAME STATUS ROLES AGE VERSION", "{out}");
    let cells = row(&out, "piceli-sim-node");
    assert_eq!(cells[1..3], ["Ready", "<none>"], "{out}");
    assert_eq!(cells[4], "v1.33.0", "{out}");
    k.ok(&[
        "label",
        "node",
        "piceli-sim-node",
        "node-role.kubernetes.io/control-plane=",
    ]);
    k.ok(&["cordon", "piceli-sim-node"]);
    let out = k.ok(&["get", "nodes", "-o", "wide"]);
    assert!(
        header(&out).starts_with(
            "NAME STATUS ROLES AGE VERSION INTERNAL-IP EXTERNAL-IP OS-IMAGE KERNEL-VERSION CONTAINER-RUNTIME"
        ),
        "{out}"
    );
    let cells = row(&out, "piceli-sim-node");
    assert_eq!(
        cells[1..3],
        ["Ready,SchedulingDisabled", "control-plane"],
        "{out}"
    );
    assert_eq!(cells[5..7], ["10.0.0.10", "<none>"], "{out}");
}

#[test]
fn kubectl_get_events_shows_last_seen_type_reason_object_message() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let now = piceli_sim::time::format_rfc3339(piceli_sim::time::now_secs() - 30);
    let event = format!(
        "apiVersion: v1\nkind: Event\nmetadata: {{name: web.1}}\n\
         involvedObject: {{kind: Pod, name: web, namespace: default, fieldPath: 'spec.containers{{web}}'}}\n\
         reason: Started\ntype: Normal\nmessage: 'Started container web '\ncount: 3\n\
         firstTimestamp: '{now}'\nlastTimestamp: '{now}'\nsource: {{component: kubelet, host: node-1}}\n"
    );
    k.ok(&["create", "-f", &k.file("ev.yaml", &event)]);
    let out = k.ok(&["get", "events"]);
    assert_eq!(
        header(&out),
        "LAST SEEN TYPE REASON OBJECT MESSAGE",
        "{out}"
    );
    let line = out.lines().nth(1).unwrap_or("");
    let cells: Vec<&str> = line
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert!(cells[0].ends_with('s'), "an age: {out}");
    assert_eq!(
        cells[1..],
        ["Normal", "Started", "pod/web", "Started container web"],
        "{out}"
    );
    let wide = k.ok(&["get", "events", "-o", "wide"]);
    assert_eq!(
        header(&wide),
        "LAST SEEN TYPE REASON OBJECT SUBOBJECT SOURCE MESSAGE FIRST SEEN COUNT NAME",
        "{wide}"
    );
    assert!(wide.contains("spec.containers{web}"), "{wide}");
    assert!(wide.contains("kubelet, node-1"), "{wide}");
    let line = wide.lines().nth(1).unwrap_or("");
    let cells: Vec<&str> = line
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(cells[8..], ["3", "web.1"], "{wide}");
}

#[test]
fn kubectl_get_cronjobs_shows_schedule_suspend_active_last_schedule() {
    // Controllers on (for the run below); a yearly schedule does not fire during the test.
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    k.ok(&[
        "create",
        "cronjob",
        "tick",
        "--image=busybox",
        "--schedule=0 0 1 1 *",
    ]);
    let out = k.ok(&["get", "cronjobs"]);
    assert_eq!(
        header(&out),
        "NAME SCHEDULE TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE",
        "{out}"
    );
    let cells = row(&out, "tick");
    assert_eq!(
        cells[1..6],
        ["0 0 1 1 *", "<none>", "False", "0", "<none>"],
        "{out}"
    );
    let wide = k.ok(&["get", "cronjobs", "-o", "wide"]);
    assert!(
        header(&wide).ends_with("AGE CONTAINERS IMAGES SELECTOR"),
        "{wide}"
    );
    assert_eq!(
        row(&wide, "tick")[7..],
        ["tick", "busybox", "<none>"],
        "{wide}"
    );
    // Once it has run, LAST SCHEDULE is the age of its last scheduled time (the sim's every-second
    // schedule stands in for the cron one).
    k.ok(&[
        "annotate",
        "cronjob",
        "tick",
        "sim.piceli.dev/schedule-every=1s",
    ]);
    let last = common::eventually("a last schedule", 20, || {
        let out = k.ok(&["get", "cronjobs"]);
        let cells = row(&out, "tick");
        (cells[5] != "<none>").then(|| cells[5].to_string())
    });
    let secs = last.strip_suffix('s').and_then(|n| n.parse::<u32>().ok());
    assert!(secs.is_some_and(|n| n < 20), "an age in seconds: {last}");
    let status = k.ok(&[
        "get",
        "cronjob",
        "tick",
        "-o",
        "jsonpath={.status.lastScheduleTime}",
    ]);
    assert!(status.trim().ends_with('Z'), "{status}");
}

#[test]
fn kubectl_shows_a_custom_resources_date_columns_as_ages() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let crd = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: backups.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Backup, plural: backups, singular: backup}
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - {name: Started, type: date, jsonPath: .spec.startedAt}
    - {name: Size, type: integer, jsonPath: .spec.size}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
";
    k.ok(&["apply", "--server-side", "-f", &k.file("crd.yaml", crd)]);
    let started =
        piceli_sim::time::format_rfc3339(piceli_sim::time::now_secs() - (3 * 3600 + 5 * 60));
    let b = format!(
        "apiVersion: example.com/v1\nkind: Backup\nmetadata: {{name: nightly}}\nspec: {{startedAt: '{started}', size: 7}}\n"
    );
    eventually("the Backup type served", 10, || {
        let o = k.run(&["apply", "--server-side", "-f", &k.file("b.yaml", &b)]);
        (o.code == 0).then_some(())
    });
    let out = k.ok(&["get", "backups"]);
    // Declared columns replace the default Age column, as apiextensions-apiserver serves them.
    assert_eq!(header(&out), "NAME STARTED SIZE", "{out}");
    assert_eq!(row(&out, "nightly")[1..], ["3h5m", "7"], "{out}");
}
