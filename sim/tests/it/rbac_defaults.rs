//! What RBAC gives a cluster without anyone creating it and the reviews other servers delegate to
//! it, through the real kubectl: anonymous requests (`system:anonymous`, 403 but for public
//! info), the `admin`/`edit`/`view` ClusterRoles aggregating `aggregate-to-*` roles, TokenReview,
//! SubjectAccessReview and LocalSubjectAccessReview.

use crate::common;

use common::{Kubectl, json_of};

const SA: &str = "system:serviceaccount:shop:bot";

fn bot(k: &Kubectl) -> String {
    k.ok(&["create", "namespace", "shop"]);
    k.ok(&["create", "serviceaccount", "bot", "-n", "shop"]);
    k.ok(&["create", "token", "bot", "-n", "shop"])
        .trim()
        .to_string()
}

#[test]
fn kubectl_without_credentials_is_system_anonymous() {
    let sim = common::sim();
    let anon = Kubectl::anonymous(&sim);
    // (Discovery is forbidden to anonymous users, so kubectl is given the path.)
    let out = anon.run(&["get", "--raw", "/api/v1/namespaces/default/configmaps"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains(
            "configmaps is forbidden: User \"system:anonymous\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""
        ),
        "{}",
        out.stderr
    );
    // Public info is for everyone (system:public-info-viewer binds system:unauthenticated).
    let version = json_of(&anon.ok(&["version", "-o", "json"]));
    assert_eq!(version["serverVersion"]["minor"], "33", "{version}");
    assert_eq!(anon.ok(&["get", "--raw", "/healthz"]).trim(), "ok");
    // Discovery is for authenticated users only.
    let out = anon.run(&["get", "--raw", "/api"]);
    assert!(
        out.stderr
            .contains("forbidden: User \\\"system:anonymous\\\" cannot get path \\\"/api\\\"")
            || out
                .stderr
                .contains("forbidden: User \"system:anonymous\" cannot get path \"/api\""),
        "{}",
        out.stderr
    );
    // A wrong token is still a 401.
    let out = Kubectl::new(&sim).run(&["--token", "not-a-token", "get", "configmaps"]);
    assert!(
        out.stderr
            .contains("the server has asked for the client to provide credentials"),
        "{}",
        out.stderr
    );
}

/// Whether the stored ClusterRole `name` has `rule` among its rules, once within 10 s (the
/// aggregation controller writes it on its next turn).
fn stored_rules_reach(
    k: &Kubectl,
    name: &str,
    rule: &serde_json::Value,
    present: bool,
) -> serde_json::Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let r = json_of(&k.ok(&[
            "get",
            "clusterrole",
            name,
            "-o",
            "json",
            "--show-managed-fields",
        ]));
        let has = r["rules"].as_array().is_some_and(|a| a.contains(rule));
        if has == present || std::time::Instant::now() > deadline {
            assert_eq!(has, present, "{name}: {r}");
            return r;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn kubectl_get_clusterrole_shows_the_rules_the_aggregation_controller_stored() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    let limits = k.file(
        "limits.yaml",
        "apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: limit-maker
  labels: {rbac.authorization.k8s.io/aggregate-to-view: 'true'}
rules:
- {apiGroups: [''], resources: [limitranges], verbs: [create]}
",
    );
    k.ok(&["apply", "-f", &limits]);
    let rule =
        serde_json::json!({"apiGroups": [""], "resources": ["limitranges"], "verbs": ["create"]});
    // view selects it; edit selects view and admin selects edit, so it reaches all three.
    for role in ["view", "edit", "admin"] {
        let r = stored_rules_reach(&k, role, &rule, true);
        let rules = r["rules"].as_array().expect("rules");
        let once = rules.iter().filter(|x| **x == rule).count();
        assert_eq!(once, 1, "each rule once: {r}");
        let managers: Vec<&str> = r["metadata"]["managedFields"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["manager"].as_str())
            .collect();
        assert!(
            managers.contains(&"clusterrole-aggregation-controller"),
            "{r}"
        );
    }
    // The yaml kubectl prints shows it too, and the rule goes with the role it came from.
    let yaml = k.ok(&["get", "clusterrole", "admin", "-o", "yaml"]);
    assert!(yaml.contains("limitranges"), "{yaml}");
    k.ok(&["delete", "clusterrole", "limit-maker"]);
    for role in ["view", "edit", "admin"] {
        stored_rules_reach(&k, role, &rule, false);
    }
}

#[test]
fn admin_edit_and_view_aggregate_their_roles() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    bot(&k);
    for role in ["admin", "edit", "view"] {
        let r = json_of(&k.ok(&["get", "clusterrole", role, "-o", "json"]));
        let selector = &r["aggregationRule"]["clusterRoleSelectors"][0]["matchLabels"];
        assert_eq!(
            selector[format!("rbac.authorization.k8s.io/aggregate-to-{role}")],
            "true",
            "{r}"
        );
        assert!(r["rules"].as_array().is_some_and(|a| !a.is_empty()), "{r}");
    }
    let can = |args: &[&str]| -> String {
        let mut all = vec!["auth", "can-i", "--as", SA, "-n", "shop"];
        all.extend_from_slice(args);
        k.run(&all).stdout.trim().to_string()
    };
    k.ok(&[
        "create",
        "rolebinding",
        "bot-view",
        "--clusterrole=view",
        "--serviceaccount=shop:bot",
        "-n",
        "shop",
    ]);
    assert_eq!(can(&["list", "deployments.apps"]), "yes");
    assert_eq!(can(&["create", "deployments.apps"]), "no");
    assert_eq!(can(&["get", "secrets"]), "no", "view does not read Secrets");
    // A ClusterRole labelled aggregate-to-view extends view (as the aggregation controller does).
    let limits = k.file(
        "limits.yaml",
        "apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: limit-maker
  labels: {rbac.authorization.k8s.io/aggregate-to-view: 'true'}
rules:
- {apiGroups: [''], resources: [limitranges], verbs: [create]}
",
    );
    k.ok(&["apply", "-f", &limits]);
    assert_eq!(can(&["create", "limitranges"]), "yes");
    k.ok(&[
        "create",
        "rolebinding",
        "bot-edit",
        "--clusterrole=edit",
        "--serviceaccount=shop:bot",
        "-n",
        "shop",
    ]);
    assert_eq!(can(&["create", "deployments.apps"]), "yes");
    assert_eq!(can(&["get", "secrets"]), "yes");
    k.ok(&["delete", "rolebinding", "bot-view", "-n", "shop"]);
    assert_eq!(
        can(&["create", "limitranges"]),
        "yes",
        "edit includes view, aggregation included"
    );
    assert_eq!(
        can(&["create", "rolebindings"]),
        "no",
        "only admin manages RBAC"
    );
    k.ok(&[
        "create",
        "rolebinding",
        "bot-admin",
        "--clusterrole=admin",
        "--serviceaccount=shop:bot",
        "-n",
        "shop",
    ]);
    assert_eq!(can(&["create", "rolebindings"]), "yes");
    assert_eq!(
        can(&["create", "namespaces"]),
        "no",
        "admin is for one namespace"
    );
}

#[test]
fn token_and_subject_access_reviews_answer_for_others() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let token = bot(&k);
    let review = |token: &str| {
        let f = k.file(
            "tr.yaml",
            &format!("apiVersion: authentication.k8s.io/v1\nkind: TokenReview\nspec: {{token: \"{token}\"}}\n"),
        );
        json_of(&k.ok(&["create", "-f", &f, "-o", "json"]))
    };
    let good = review(&token);
    assert_eq!(good["status"]["authenticated"], true, "{good}");
    assert_eq!(good["status"]["user"]["username"], SA, "{good}");
    assert!(
        good["status"]["user"]["groups"]
            .as_array()
            .is_some_and(|g| g.iter().any(|g| g == "system:serviceaccounts:shop")),
        "{good}"
    );
    assert_eq!(
        good["status"]["audiences"][0],
        "https://kubernetes.default.svc.cluster.local"
    );
    let bad = review(&format!("{token}x"));
    assert_ne!(bad["status"]["authenticated"], true, "{bad}");
    assert!(bad["status"]["error"].as_str().is_some(), "{bad}");

    let sar = |kind: &str, ns: &str, verb: &str| {
        let f = k.file(
            "sar.yaml",
            &format!(
                "apiVersion: authorization.k8s.io/v1\nkind: {kind}\nmetadata: {{namespace: {ns}}}\nspec:\n  user: {SA}\n  groups: [system:serviceaccounts, system:serviceaccounts:shop, system:authenticated]\n  resourceAttributes: {{namespace: {ns}, verb: {verb}, resource: configmaps}}\n"
            ),
        );
        let out = k.run(&["create", "-f", &f, "-n", ns, "-o", "json"]);
        (out.code, out.stdout, out.stderr)
    };
    let (code, out, err) = sar("SubjectAccessReview", "shop", "list");
    assert_eq!(code, 0, "{err}");
    assert_eq!(json_of(&out)["status"]["allowed"], false, "{out}");
    k.ok(&[
        "create",
        "role",
        "cm-reader",
        "--verb=list",
        "--resource=configmaps",
        "-n",
        "shop",
    ]);
    k.ok(&[
        "create",
        "rolebinding",
        "cm-reader",
        "--role=cm-reader",
        "--serviceaccount=shop:bot",
        "-n",
        "shop",
    ]);
    let (_, out, _) = sar("SubjectAccessReview", "shop", "list");
    let answer = json_of(&out);
    assert_eq!(answer["status"]["allowed"], true, "{out}");
    assert!(
        answer["status"]["reason"].as_str().is_some_and(|r| r
            .contains("RoleBinding \"cm-reader/shop\"")
            || r.contains("cm-reader")),
        "{out}"
    );
    let (code, out, err) = sar("LocalSubjectAccessReview", "shop", "list");
    assert_eq!(code, 0, "{err}");
    assert_eq!(json_of(&out)["status"]["allowed"], true, "{out}");
    let (_, out, _) = sar("LocalSubjectAccessReview", "shop", "delete");
    assert_eq!(json_of(&out)["status"]["allowed"], false, "{out}");
    // A SubjectAccessReview must name someone.
    let f = k.file(
        "nobody.yaml",
        "apiVersion: authorization.k8s.io/v1\nkind: SubjectAccessReview\nspec:\n  resourceAttributes: {verb: get, resource: pods}\n",
    );
    let out = k.run(&["create", "-f", &f]);
    assert!(
        out.stderr
            .contains("at least one of user or group must be specified"),
        "{}",
        out.stderr
    );
}
