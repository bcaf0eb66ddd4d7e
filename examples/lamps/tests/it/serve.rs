//! The lamps operator end to end on the test's cluster (the local one with RBAC enforced, or the real control
//! plane of `PICELI_REAL_KUBECONFIG` with OwnerReferencesPermissionEnforcement), through the real kubectl:
//! `lamps plan` + `apply` put the CRD (before any Lamp), the ServiceAccount and the derived RBAC in
//! place; `lamps serve` runs on this machine with the ServiceAccount's token only, so any rule the
//! render missed fails here. A Lamp gets its status and an owned ConfigMap, and its deletion waits for
//! the finalizer's cleanup; an audited ConfigMap in another namespace gets an Event from the edge
//! controller; and with two `serve` processes, killing the leader with SIGKILL hands the Lease over.
//! On the local cluster only, the sim records which binding allowed each of the operator's requests: every verb on every resource
//! of the rendered Role and ClusterRole must have allowed one (no rule is unused; as the ClusterRole is
//! checked first, a Role rule it duplicates counts as unused too).

use crate::support;

use std::path::Path;
use std::time::Duration;

use piceli_test_support::Cluster;
use support::{
    deploy, free_port, http_get, json, kubectl, lamp, metric, ok, serve, stop, wait_for,
};

#[test]
fn lamps_reconcile_audit_and_hand_over_with_the_operator_token_only() {
    let sim = Cluster::start();
    let work = tempfile::tempdir().expect("work dir");
    let dir = work.path();
    let admin = sim.kubeconfig_path().to_path_buf();
    let operator = deploy(&sim, dir);
    ok(&admin, &["create", "namespace", "team-a"]);
    if let Some(local) = sim.sim() {
        local.record_rbac();
    }

    let (a_addr, b_addr) = (free_port(), free_port());
    let a = serve(&operator, a_addr, "lamps-a", &dir.join("a.log"));
    let ready = |addr| http_get(addr, "/readyz").is_some_and(|(s, _)| s == 200);
    let a_log = || std::fs::read_to_string(dir.join("a.log")).unwrap_or_default();
    let started = std::time::Instant::now();
    while !ready(a_addr) {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "serve a not ready after 30 s; its log:\n{}",
            a_log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Ready is not leading (a standby is ready too): b starts once a holds the Lease.
    wait_for("serve a to lead", Duration::from_secs(30), || {
        http_get(a_addr, "/metrics")
            .is_some_and(|(_, m)| metric(&m, "piceli_controller_leader ") == 1.0)
    });
    let b = serve(&operator, b_addr, "lamps-b", &dir.join("b.log"));
    wait_for("serve b answering", Duration::from_secs(30), || {
        http_get(b_addr, "/healthz").is_some()
    });

    // The Lamp the app ships with (applied after its CRD) is reconciled too.
    wait_for("the shipped lamp's status", Duration::from_secs(30), || {
        json(&admin, &["-n", "lamps-system", "get", "lamp", "hall"])
            .is_some_and(|l| l["status"]["shining"] == "white")
    });

    // The CRD controller: status, an owned child, cleanup through the finalizer.
    let (code, out, err) = kubectl(&admin, &["apply", "-f", "-"], Some(&lamp("desk", "amber")));
    assert_eq!(code, 0, "{out}{err}");
    wait_for("the lamp's status", Duration::from_secs(30), || {
        json(&admin, &["-n", "lamps-system", "get", "lamp", "desk"])
            .is_some_and(|l| l["status"]["shining"] == "amber")
    });
    let desk = json(&admin, &["-n", "lamps-system", "get", "lamp", "desk"]).expect("lamp");
    assert_eq!(desk["metadata"]["finalizers"][0], "lamps.piceli.dev/lamp");
    assert_eq!(desk["status"]["conditions"][0]["type"], "Ready");
    assert_eq!(
        desk["status"]["conditions"][0]["observedGeneration"],
        desk["metadata"]["generation"]
    );
    let child = json(
        &admin,
        &["-n", "lamps-system", "get", "configmap", "lamp-desk"],
    )
    .expect("the child ConfigMap");
    assert_eq!(child["data"]["color"], "amber");
    assert_eq!(child["metadata"]["ownerReferences"][0]["kind"], "Lamp");

    // The edge controller, cluster-wide on labelled ConfigMaps.
    ok(
        &admin,
        &[
            "-n",
            "team-a",
            "create",
            "configmap",
            "settings",
            "--from-literal=a=1",
        ],
    );
    ok(
        &admin,
        &[
            "-n",
            "team-a",
            "label",
            "configmap",
            "settings",
            "audit=yes",
        ],
    );
    wait_for("the audit Event", Duration::from_secs(30), || {
        json(&admin, &["-n", "team-a", "get", "events.events.k8s.io"]).is_some_and(|list| {
            list["items"].as_array().is_some_and(|items| {
                items
                    .iter()
                    .any(|e| e["reason"] == "Audited" && e["regarding"]["name"] == "settings")
            })
        })
    });

    // Exactly one process leads: a's metrics say so, b stands by (ready, not reconciling).
    let metrics = |addr| {
        http_get(addr, "/metrics")
            .map(|(_, b)| b)
            .unwrap_or_default()
    };
    assert_eq!(metric(&metrics(a_addr), "piceli_controller_leader "), 1.0);
    assert_eq!(metric(&metrics(b_addr), "piceli_controller_leader "), 0.0);

    // Hand-over: kill -9 the leader; b takes the Lease within its duration and reconciles.
    let mut a = a;
    a.kill().expect("kill -9 the leader");
    let _ = a.wait();
    wait_for("b to lead", Duration::from_secs(40), || {
        metric(&metrics(b_addr), "piceli_controller_leader ") == 1.0
    });
    let (code, out, err) = kubectl(&admin, &["apply", "-f", "-"], Some(&lamp("desk", "teal")));
    assert_eq!(code, 0, "{out}{err}");
    wait_for("the new leader's status", Duration::from_secs(30), || {
        json(&admin, &["-n", "lamps-system", "get", "lamp", "desk"])
            .is_some_and(|l| l["status"]["shining"] == "teal")
    });

    // Deletion waits for the cleanup, which removes the child.
    ok(
        &admin,
        &[
            "-n",
            "lamps-system",
            "delete",
            "lamp",
            "desk",
            "--wait=false",
        ],
    );
    wait_for("the lamp to go", Duration::from_secs(30), || {
        json(&admin, &["-n", "lamps-system", "get", "lamp", "desk"]).is_none()
    });
    assert!(
        json(
            &admin,
            &["-n", "lamps-system", "get", "configmap", "lamp-desk"]
        )
        .is_none()
    );

    assert!(stop(b).success(), "serve stops cleanly on SIGTERM");
    for log in ["a.log", "b.log"] {
        let text = std::fs::read_to_string(dir.join(log)).unwrap_or_default();
        assert!(
            // Not a bare "403": the log prints ports, and a port may contain those digits.
            !text.to_lowercase().contains("forbidden") && !text.contains("HTTP 403"),
            "{log}: a request the rendered RBAC does not allow:\n{text}"
        );
    }
    let lease = json(
        &admin,
        &["-n", "lamps-system", "get", "lease", "lamps-controllers"],
    )
    .expect("the Lease");
    assert_ne!(
        lease["spec"]["holderIdentity"], "lamps-a",
        "released or taken over"
    );
    // Which binding allowed each request is recorded by the local cluster only (on the real control
    // plane the operator working with its token alone, under OwnerReferencesPermissionEnforcement, is
    // the proof that no rule is missing).
    let Some(local) = sim.sim() else { return };
    let unused = unused_rules(local, &admin);
    assert!(
        unused.is_empty(),
        "rules of the rendered RBAC no request of the operator used: {unused:#?}"
    );
}

/// Each (role, verb, group, resource) granted to the operator's ServiceAccount that allowed none of
/// its requests since `record_rbac`.
fn unused_rules(sim: &piceli_sim::RunningSim, admin: &Path) -> Vec<String> {
    const SA: &str = "system:serviceaccount:lamps-system:lamps";
    let uses: Vec<_> = sim
        .rbac_uses()
        .into_iter()
        .filter(|u| u.user == SA)
        .collect();
    let bindings =
        json(admin, &["get", "clusterrolebindings,rolebindings", "-A"]).expect("the bindings");
    let mut roles = Vec::new();
    for b in bindings["items"].as_array().expect("items") {
        let ours = b["subjects"].as_array().is_some_and(|s| {
            s.iter()
                .any(|s| s["kind"] == "ServiceAccount" && s["name"] == "lamps")
        });
        if !ours {
            continue;
        }
        let kind = b["roleRef"]["kind"]
            .as_str()
            .expect("roleRef kind")
            .to_string();
        let name = b["roleRef"]["name"]
            .as_str()
            .expect("roleRef name")
            .to_string();
        let ns = b["metadata"]["namespace"].as_str().map(str::to_string);
        roles.push((kind, ns, name));
    }
    assert!(
        roles.iter().any(|(k, _, _)| k == "ClusterRole")
            && roles.iter().any(|(k, _, _)| k == "Role"),
        "the operator has a ClusterRole and a Role: {roles:?}"
    );
    let mut unused = Vec::new();
    for (kind, ns, name) in roles {
        let mut args = vec!["get", kind.as_str(), name.as_str()];
        if let (Some(ns), "Role") = (ns.as_deref(), kind.as_str()) {
            args.extend(["-n", ns]);
        }
        let role = json(admin, &args).expect("the role");
        let marker = format!("of {kind} \"{name}\"");
        for rule in role["rules"].as_array().expect("rules") {
            let list = |key: &str| -> Vec<String> {
                rule[key]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            };
            for group in list("apiGroups") {
                for resource in list("resources") {
                    for verb in list("verbs") {
                        let used = uses.iter().any(|u| {
                            u.allowed_by.contains(&marker)
                                && u.verb == verb
                                && u.api_group == group
                                && u.resource == resource
                        });
                        if !used {
                            unused.push(format!("{kind} {name}: {verb} {group}/{resource}"));
                        }
                    }
                }
            }
        }
    }
    unused
}
