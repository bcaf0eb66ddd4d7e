//! Acceptance tests of apply driven by the real kubectl (each with its own KUBECACHEDIR and the
//! simulator's kubeconfig): server-side apply no-ops, diff, server dry runs with defaults, conflicts and
//! force, shared ownership, field removal, client-side apply and its migration, validation, and
//! `kind: List` files (`kubectl_apply/lists.rs`).

use crate::common;
#[path = "../kubectl_apply/lists.rs"]
mod lists;

use common::{DEPLOYMENT, Kubectl, json_of};

fn rv(k: &Kubectl, what: &str) -> String {
    k.ok(&["get", what, "-o", "jsonpath={.metadata.resourceVersion}"])
}

#[test]
fn server_side_apply_twice_changes_nothing() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let f = k.file("d.yaml", DEPLOYMENT);
    assert!(
        k.ok(&["apply", "--server-side", "-f", &f])
            .contains("serverside-applied")
    );
    let first = rv(&k, "deploy/web");
    let mf1 = k.ok(&[
        "get",
        "deploy/web",
        "--show-managed-fields",
        "-o",
        "jsonpath={.metadata.managedFields}",
    ]);
    k.ok(&["apply", "--server-side", "-f", &f]);
    assert_eq!(rv(&k, "deploy/web"), first, "resourceVersion unchanged");
    let mf2 = k.ok(&[
        "get",
        "deploy/web",
        "--show-managed-fields",
        "-o",
        "jsonpath={.metadata.managedFields}",
    ]);
    assert_eq!(mf1, mf2, "managedFields (and their times) unchanged");
}

#[test]
fn diff_server_side_exits_0_when_unchanged_and_1_when_changed() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let f = k.file("d.yaml", DEPLOYMENT);
    k.ok(&["apply", "--server-side", "-f", &f]);
    assert_eq!(k.run(&["diff", "--server-side", "-f", &f]).code, 0);
    let changed = k.file("d2.yaml", &DEPLOYMENT.replace("replicas: 2", "replicas: 4"));
    let out = k.run(&["diff", "--server-side", "-f", &changed]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stdout.contains("+  replicas: 4"), "{}", out.stdout);
}

#[test]
fn server_dry_run_shows_defaults_and_stores_nothing() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let f = k.file("d.yaml", DEPLOYMENT);
    let out = k.ok(&[
        "apply",
        "--server-side",
        "--dry-run=server",
        "-o",
        "json",
        "-f",
        &f,
    ]);
    let d = json_of(&out);
    assert_eq!(d["spec"]["strategy"]["type"], "RollingUpdate");
    assert_eq!(d["spec"]["revisionHistoryLimit"], 10);
    assert_eq!(d["spec"]["progressDeadlineSeconds"], 600);
    let c = &d["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["imagePullPolicy"], "IfNotPresent");
    assert_eq!(c["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(c["ports"][0]["protocol"], "TCP");
    assert_eq!(d["spec"]["template"]["spec"]["restartPolicy"], "Always");
    let get = k.run(&["get", "deploy/web"]);
    assert_eq!(get.code, 1);
    assert!(
        get.stderr.contains("NotFound") && get.stderr.contains("\"web\" not found"),
        "{}",
        get.stderr
    );
}

#[test]
fn conflicting_managers_get_kubectls_advice_and_force_conflicts_wins() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    k.ok(&[
        "apply",
        "--server-side",
        "-f",
        &k.file("d.yaml", DEPLOYMENT),
    ]);
    let other = k.file("d3.yaml", &DEPLOYMENT.replace("replicas: 2", "replicas: 3"));
    let out = k.run(&[
        "apply",
        "--server-side",
        "--field-manager=other",
        "-f",
        &other,
    ]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("Apply failed with 1 conflict: conflict with \"kubectl\": .spec.replicas"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("--force-conflicts"),
        "kubectl prints its advice: {}",
        out.stderr
    );
    k.ok(&[
        "apply",
        "--server-side",
        "--field-manager=other",
        "--force-conflicts",
        "-f",
        &other,
    ]);
    assert_eq!(
        k.ok(&["get", "deploy/web", "-o", "jsonpath={.spec.replicas}"]),
        "3"
    );
}

#[test]
fn equal_values_are_shared_between_managers() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let f = k.file("d.yaml", DEPLOYMENT);
    k.ok(&["apply", "--server-side", "-f", &f]);
    k.ok(&["apply", "--server-side", "--field-manager=other", "-f", &f]);
    let mf = json_of(&k.ok(&[
        "get",
        "deploy/web",
        "--show-managed-fields",
        "-o",
        "jsonpath={.metadata.managedFields}",
    ]));
    let owners: Vec<&str> = mf
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["fieldsV1"]["f:spec"]["f:replicas"].is_object())
        .filter_map(|e| e["manager"].as_str())
        .collect();
    assert_eq!(owners, vec!["kubectl", "other"]);
}

#[test]
fn removing_a_field_from_the_manifest_removes_it() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let with_label = DEPLOYMENT.replace(
        "labels: {app: web}\nspec:",
        "labels: {app: web, tier: front}\nspec:",
    );
    k.ok(&[
        "apply",
        "--server-side",
        "-f",
        &k.file("a.yaml", &with_label),
    ]);
    assert_eq!(
        k.ok(&[
            "get",
            "deploy/web",
            "-o",
            "jsonpath={.metadata.labels.tier}"
        ]),
        "front"
    );
    k.ok(&[
        "apply",
        "--server-side",
        "-f",
        &k.file("b.yaml", DEPLOYMENT),
    ]);
    assert_eq!(
        k.ok(&["get", "deploy/web", "-o", "jsonpath={.metadata.labels}"]),
        "{\"app\":\"web\"}"
    );
    // A defaulted field a manager stops setting goes back to its default.
    let with_limit =
        DEPLOYMENT.replace("replicas: 2\n", "replicas: 2\n  revisionHistoryLimit: 3\n");
    k.ok(&[
        "apply",
        "--server-side",
        "-f",
        &k.file("c.yaml", &with_limit),
    ]);
    assert_eq!(
        k.ok(&[
            "get",
            "deploy/web",
            "-o",
            "jsonpath={.spec.revisionHistoryLimit}"
        ]),
        "3"
    );
    k.ok(&["apply", "--server-side", "-f", "b.yaml"]);
    assert_eq!(
        k.ok(&[
            "get",
            "deploy/web",
            "-o",
            "jsonpath={.spec.revisionHistoryLimit}"
        ]),
        "10"
    );
}

#[test]
fn removing_one_of_two_containers_leaves_the_other_untouched() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    k.ok(&[
        "apply",
        "--server-side",
        "-f",
        &k.file("a.yaml", DEPLOYMENT),
    ]);
    let before = json_of(&k.ok(&["get", "deploy/web", "-o", "json"]));
    let one = DEPLOYMENT.replace("      - name: side\n        image: busybox:1.36\n", "");
    k.ok(&["apply", "--server-side", "-f", &k.file("b.yaml", &one)]);
    let after = json_of(&k.ok(&["get", "deploy/web", "-o", "json"]));
    let containers = after["spec"]["template"]["spec"]["containers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(containers.len(), 1);
    assert_eq!(
        containers[0],
        before["spec"]["template"]["spec"]["containers"][0]
    );
}

#[test]
fn client_side_apply_twice_prints_unchanged() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let f = k.file("d.yaml", DEPLOYMENT);
    assert!(
        k.ok(&["apply", "-f", &f])
            .contains("deployment.apps/web created")
    );
    assert!(
        k.ok(&["apply", "-f", &f])
            .contains("deployment.apps/web unchanged")
    );
    let changed = k.file("d2.yaml", &DEPLOYMENT.replace("nginx:1.27", "nginx:1.28"));
    assert!(
        k.ok(&["apply", "-f", &changed])
            .contains("deployment.apps/web configured")
    );
    assert_eq!(
        k.ok(&[
            "get",
            "deploy/web",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image}"
        ]),
        "nginx:1.28"
    );
}

#[test]
fn unknown_fields_are_rejected_under_strict_and_accepted_with_validate_false() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let f = k.file(
        "bad.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad}\ndata: {a: \"1\"}\nbogus: 1\n",
    );
    let out = k.run(&["apply", "-f", &f]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("strict decoding error: unknown field \"bogus\""),
        "{}",
        out.stderr
    );
    k.ok(&["apply", "--validate=false", "-f", &f]);
    assert_eq!(k.ok(&["get", "cm/bad", "-o", "jsonpath={.data.a}"]), "1");
}

#[test]
fn server_side_apply_takes_over_from_client_side_apply() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let both = k.file(
        "m.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: mig}\ndata: {a: \"1\", b: \"2\"}\n",
    );
    k.ok(&["apply", "-f", &both]);
    // kubectl migrates the client-side-apply ownership by rewriting managedFields.
    k.ok(&["apply", "--server-side", "-f", &both]);
    let mf = k.ok(&[
        "get",
        "cm",
        "mig",
        "--show-managed-fields",
        "-o",
        "jsonpath={.metadata.managedFields[*].manager}",
    ]);
    assert!(!mf.contains("kubectl-client-side-apply"), "{mf}");
    let one = k.file(
        "m2.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: mig}\ndata: {a: \"1\"}\n",
    );
    k.ok(&["apply", "--server-side", "-f", &one]);
    assert_eq!(
        k.ok(&["get", "cm", "mig", "-o", "jsonpath={.data}"]),
        "{\"a\":\"1\"}"
    );
}

#[test]
fn invalid_objects_are_rejected_with_422_field_causes() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let bad = DEPLOYMENT.replace(
        "    metadata: {labels: {app: web}}",
        "    metadata: {labels: {app: other}}",
    );
    let out = k.run(&["apply", "--server-side", "-f", &k.file("bad.yaml", &bad)]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("The Deployment \"web\" is invalid: spec.template.metadata.labels"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("`selector` does not match template `labels`"),
        "{}",
        out.stderr
    );
    k.ok(&[
        "apply",
        "--server-side",
        "-f",
        &k.file("good.yaml", DEPLOYMENT),
    ]);
    let moved = DEPLOYMENT.replace("app: web", "app: web2");
    let out = k.run(&[
        "apply",
        "--server-side",
        "-f",
        &k.file("moved.yaml", &moved),
    ]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("spec.selector: Invalid value")
            && out.stderr.contains("field is immutable"),
        "{}",
        out.stderr
    );
    let out = k.run(&[
        "patch",
        "deploy",
        "web",
        "--type=merge",
        "-p",
        "{\"metadata\":{\"labels\":{\"bad\":\"not ok!\"}}}",
    ]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("metadata.labels: Invalid value: \"not ok!\""),
        "{}",
        out.stderr
    );
    let warn = k.file(
        "warn.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: w}\nbogus: 1\n",
    );
    let out = k.run(&["apply", "--validate=warn", "-f", &warn]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("unknown field \"bogus\""),
        "a Warning header reaches kubectl: {}",
        out.stderr
    );
}

const APP: &str = include_str!("../data/app.yaml");

#[test]
fn a_realistic_application_applies_strictly_and_reapplies_as_a_no_op() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let f = k.file("app.yaml", APP);
    let first = k.ok(&["apply", "--server-side", "-f", &f]);
    assert_eq!(
        first
            .lines()
            .filter(|l| l.ends_with("serverside-applied"))
            .count(),
        16,
        "{first}"
    );
    let rv = sim.resource_version().expect("rv");
    k.ok(&["apply", "--server-side", "-f", &f]);
    assert_eq!(
        sim.resource_version().expect("rv"),
        rv,
        "re-applying the same manifests writes nothing"
    );
    assert_eq!(k.run(&["diff", "--server-side", "-f", &f]).code, 0);
    assert_eq!(
        k.ok(&[
            "get",
            "secret",
            "api-secret",
            "-n",
            "shop",
            "-o",
            "jsonpath={.data.password}"
        ]),
        "aHVudGVyMg=="
    );
    let svc = json_of(&k.ok(&["get", "svc", "api", "-n", "shop", "-o", "json"]));
    assert_eq!(svc["spec"]["ports"][1]["targetPort"], 9090);
    assert_eq!(svc["spec"]["ports"][0]["targetPort"], "http");
    let names = k.ok(&["get", "all", "-n", "shop", "-o", "name"]);
    for n in [
        "deployment.apps/api",
        "service/api",
        "statefulset.apps/db",
        "cronjob.batch/cleanup",
        "horizontalpodautoscaler.autoscaling/api",
    ] {
        assert!(
            names.lines().any(|l| l == n),
            "{n} missing from get all:\n{names}"
        );
    }
}
