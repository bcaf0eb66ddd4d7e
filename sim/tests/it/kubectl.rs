//! Acceptance tests of the other verbs driven by the real kubectl (each with its own KUBECACHEDIR and
//! the simulator's kubeconfig): version, discovery, get/Table, watch, delete, label/annotate/patch,
//! scale, CRDs, create generators (protobuf bodies), auth.

use crate::common;

use common::{DEPLOYMENT, Kubectl, Watching, json_of};

#[test]
fn version_reports_1_33_so_the_dispatcher_runs_kubectl_1_33() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let v = json_of(&k.ok(&["version", "-o", "json"]));
    assert_eq!(v["serverVersion"]["minor"], "33");
    assert_eq!(v["clientVersion"]["minor"], "33");
}

#[test]
fn api_resources_lists_builtin_kinds_with_short_names() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let out = k.ok(&["api-resources"]);
    for needle in [
        "deployments",
        "deploy",
        "configmaps",
        "customresourcedefinitions",
        "horizontalpodautoscalers",
        "leases",
    ] {
        assert!(
            out.split_whitespace()
                .any(|w| w == needle || w.split(',').any(|p| p == needle)),
            "{needle} missing from:\n{out}"
        );
    }
    let namespaced = k.ok(&["api-resources", "--namespaced=false", "-o", "name"]);
    assert!(namespaced.lines().any(|l| l == "namespaces"));
    assert!(!namespaced.lines().any(|l| l == "configmaps"));
}

#[test]
fn delete_then_get_is_not_found() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    k.ok(&[
        "apply",
        "-f",
        &k.file(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {a: \"1\"}\n",
        ),
    ]);
    assert!(
        k.ok(&["delete", "cm", "cfg"])
            .contains("configmap \"cfg\" deleted")
    );
    let out = k.run(&["get", "cm", "cfg"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("Error from server (NotFound): configmaps \"cfg\" not found"),
        "{}",
        out.stderr
    );
}

#[test]
fn get_prints_table_columns() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    k.ok(&[
        "apply",
        "--server-side",
        "-f",
        &k.file("d.yaml", DEPLOYMENT),
    ]);
    let out = k.ok(&["get", "deployments"]);
    let header: Vec<&str> = out
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        vec!["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    );
    assert!(
        out.lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("web") && l.contains("0/2")),
        "{out}"
    );
    let svc = "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  selector: {app: web}\n  ports: [{port: 80}]\n";
    k.ok(&["apply", "--server-side", "-f", &k.file("s.yaml", svc)]);
    let out = k.ok(&["get", "svc", "web"]);
    assert!(
        out.starts_with("NAME") && out.contains("CLUSTER-IP") && out.contains("80/TCP"),
        "{out}"
    );
    let wide = k.ok(&["get", "deploy", "web", "-o", "wide"]);
    let header: Vec<&str> = wide
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        vec![
            "NAME",
            "READY",
            "UP-TO-DATE",
            "AVAILABLE",
            "AGE",
            "CONTAINERS",
            "IMAGES",
            "SELECTOR"
        ]
    );
    assert!(
        wide.contains("web,side")
            && wide.contains("nginx:1.27,busybox:1.36")
            && wide.contains("app=web"),
        "{wide}"
    );
    let all = k.ok(&["get", "svc", "-A"]);
    assert!(all.starts_with("NAMESPACE"), "{all}");
}

#[test]
fn get_watch_and_get_name_watch_stream_changes() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    k.ok(&[
        "apply",
        "-f",
        &k.file(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {a: \"1\"}\n",
        ),
    ]);
    let all = Watching::start(&k, &["get", "cm", "-w", "--output-watch-events"]);
    let one = Watching::start(&k, &["get", "cm", "cfg", "-w"]);
    // Once the initial rows are printed, kubectl watches from the list's resourceVersion.
    all.wait_for("the initial ADDED row", |l| {
        l.starts_with("ADDED") && l.contains("cfg")
    });
    one.wait_for("the initial row", |l| l.starts_with("cfg"));
    k.ok(&["label", "cm", "cfg", "team=a"]);
    k.ok(&[
        "create",
        "-f",
        &k.file(
            "other.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n",
        ),
    ]);
    all.wait_for("MODIFIED cfg", |l| {
        l.starts_with("MODIFIED") && l.contains("cfg")
    });
    all.wait_for("ADDED other", |l| {
        l.starts_with("ADDED") && l.contains("other")
    });
    one.wait_count("two cfg rows", |l| l.starts_with("cfg"), 2);
    all.stop();
    let one_out = one.stop();
    assert!(!one_out.iter().any(|l| l.contains("other")), "{one_out:?}");
}

#[test]
fn label_annotate_and_the_three_patch_types() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    k.ok(&[
        "apply",
        "--server-side",
        "-f",
        &k.file("d.yaml", DEPLOYMENT),
    ]);
    k.ok(&["label", "deploy", "web", "team=a"]);
    k.ok(&["annotate", "deploy", "web", "note=hello"]);
    k.ok(&[
        "patch",
        "deploy",
        "web",
        "--type=merge",
        "-p",
        "{\"spec\":{\"minReadySeconds\":5}}",
    ]);
    k.ok(&[
        "patch",
        "deploy",
        "web",
        "--type=json",
        "-p",
        "[{\"op\":\"replace\",\"path\":\"/spec/replicas\",\"value\":4}]",
    ]);
    k.ok(&["patch", "deploy", "web", "--type=strategic", "-p",
        "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"side\",\"image\":\"busybox:1.37\"}]}}}}"]);
    let d = json_of(&k.ok(&["get", "deploy/web", "--show-managed-fields", "-o", "json"]));
    assert_eq!(d["metadata"]["labels"]["team"], "a");
    assert_eq!(d["metadata"]["annotations"]["note"], "hello");
    assert_eq!(d["spec"]["minReadySeconds"], 5);
    assert_eq!(d["spec"]["replicas"], 4);
    let images: Vec<&str> = d["spec"]["template"]["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["image"].as_str())
        .collect();
    assert_eq!(images, vec!["nginx:1.27", "busybox:1.37"]);
    let managers: Vec<&str> = d["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["manager"].as_str())
        .collect();
    assert!(
        managers.contains(&"kubectl-label") && managers.contains(&"kubectl-patch"),
        "{managers:?}"
    );
}

#[test]
fn scale_sets_replicas_through_the_scale_subresource() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    k.ok(&[
        "apply",
        "--server-side",
        "-f",
        &k.file("d.yaml", DEPLOYMENT),
    ]);
    assert!(
        k.ok(&["scale", "deploy/web", "--replicas=5"])
            .contains("deployment.apps/web scaled")
    );
    assert_eq!(
        k.ok(&["get", "deploy/web", "-o", "jsonpath={.spec.replicas}"]),
        "5"
    );
    assert!(
        k.ok(&["scale", "deploy/web", "--replicas=0"])
            .contains("scaled")
    );
    assert_eq!(
        k.ok(&["get", "deploy/web", "-o", "jsonpath={.spec.replicas}"]),
        "0"
    );
}

#[test]
fn crds_work_with_kubectl() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let crd = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - {name: Color, type: string, jsonPath: .spec.color}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [color]
            properties:
              color: {type: string}
              size: {type: string, default: M, enum: [S, M, L]}
";
    k.ok(&["apply", "--server-side", "-f", &k.file("crd.yaml", crd)]);
    let w = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {color: red}\n";
    k.ok(&["apply", "--server-side", "-f", &k.file("w.yaml", w)]);
    let out = k.ok(&["get", "wd"]);
    let header: Vec<&str> = out
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    // Declared printer columns replace the default Age column (apiextensions-apiserver).
    assert_eq!(header, vec!["NAME", "COLOR"], "{out}");
    assert!(out.contains("red"));
    assert_eq!(
        k.ok(&["get", "wd", "w1", "-o", "jsonpath={.spec.size}"]),
        "M",
        "schema default applied"
    );
    let xl = k.file("xl.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w3}\nspec: {color: red, size: XL}\n");
    let out = k.run(&["apply", "--server-side", "-f", &xl]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("spec.size: Unsupported value: \"XL\""),
        "{}",
        out.stderr
    );
    let no_color = k.file(
        "nc.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w4}\nspec: {size: S}\n",
    );
    let out = k.run(&["apply", "--server-side", "-f", &no_color]);
    assert!(
        out.stderr.contains("spec.color: Required value"),
        "{}",
        out.stderr
    );
    let bad = k.file(
        "bad.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w2}\nspec: {colour: red}\n",
    );
    let out = k.run(&["apply", "-f", &bad]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("unknown field \"spec.colour\""),
        "{}",
        out.stderr
    );
}

#[test]
fn create_generators_send_protobuf_and_it_is_understood() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    k.ok(&["create", "namespace", "team"]);
    k.ok(&[
        "create",
        "configmap",
        "cfg",
        "-n",
        "team",
        "--from-literal=a=b",
    ]);
    k.ok(&[
        "create",
        "secret",
        "generic",
        "s",
        "-n",
        "team",
        "--from-literal=p=q",
    ]);
    k.ok(&["create", "serviceaccount", "bot", "-n", "team"]);
    k.ok(&[
        "create",
        "deployment",
        "d",
        "-n",
        "team",
        "--image=nginx:1.27",
        "--replicas=2",
        "--port=80",
    ]);
    assert_eq!(
        k.ok(&["get", "cm", "cfg", "-n", "team", "-o", "jsonpath={.data.a}"]),
        "b"
    );
    assert_eq!(
        k.ok(&[
            "get",
            "secret",
            "s",
            "-n",
            "team",
            "-o",
            "jsonpath={.data.p} {.type}"
        ]),
        "cQ== Opaque"
    );
    let d = json_of(&k.ok(&["get", "deploy", "d", "-n", "team", "-o", "json"]));
    assert_eq!(d["spec"]["replicas"], 2);
    assert_eq!(d["spec"]["selector"]["matchLabels"]["app"], "d");
    let c = &d["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        (c["name"].as_str(), c["image"].as_str()),
        (Some("nginx"), Some("nginx:1.27"))
    );
    assert_eq!(c["ports"][0]["containerPort"], 80);
    assert_eq!(d["spec"]["strategy"]["type"], "RollingUpdate");
    assert!(k.ok(&["get", "sa", "-n", "team"]).contains("bot"));
}

#[test]
fn auth_can_i_and_whoami_answer_for_the_single_user() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    assert_eq!(
        k.ok(&["auth", "can-i", "create", "deployments"]).trim(),
        "yes"
    );
    assert!(k.ok(&["auth", "whoami"]).contains("piceli-sim-admin"));
}

#[test]
fn expose_and_create_service_job_cronjob_generators_work() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    k.ok(&[
        "create",
        "deployment",
        "d",
        "--image=nginx:1.27",
        "--port=80",
    ]);
    k.ok(&[
        "expose",
        "deployment",
        "d",
        "--port=8080",
        "--target-port=80",
    ]);
    let svc = json_of(&k.ok(&["get", "svc", "d", "-o", "json"]));
    assert_eq!(svc["spec"]["ports"][0]["port"], 8080);
    assert_eq!(svc["spec"]["ports"][0]["targetPort"], 80);
    assert_eq!(svc["spec"]["selector"]["app"], "d");
    k.ok(&["create", "service", "nodeport", "np", "--tcp=81:8081"]);
    let np = json_of(&k.ok(&["get", "svc", "np", "-o", "json"]));
    assert_eq!(np["spec"]["type"], "NodePort");
    assert!(
        np["spec"]["ports"][0]["nodePort"]
            .as_i64()
            .is_some_and(|p| (30_000..32_768).contains(&p)),
        "{np}"
    );
    k.ok(&["create", "job", "j", "--image=busybox", "--", "echo", "hi"]);
    assert_eq!(
        k.ok(&[
            "get",
            "job",
            "j",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].command}"
        ]),
        "[\"echo\",\"hi\"]"
    );
    let job = json_of(&k.ok(&["get", "job", "j", "-o", "json"]));
    let uid = job["metadata"]["uid"].clone();
    assert_eq!(
        job["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"],
        uid
    );
    assert_eq!(
        job["spec"]["template"]["metadata"]["labels"]["job-name"],
        "j"
    );
    k.ok(&[
        "create",
        "cronjob",
        "cj",
        "--image=busybox",
        "--schedule=*/5 * * * *",
        "--",
        "date",
    ]);
    assert_eq!(
        k.ok(&["get", "cj", "cj", "-o", "jsonpath={.spec.schedule}"]),
        "*/5 * * * *"
    );
}

#[test]
fn running_sim_hands_out_a_ready_kubectl_command() {
    let sim = common::sim();
    let out = sim
        .kubectl()
        .args(["get", "namespace", "kube-system", "-o", "name"])
        .output()
        .expect("kubectl is required for these tests");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "namespace/kube-system",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
