//! RBAC, ServiceAccount tokens and identities, driven by the real kubectl (`create token`,
//! `--token`, `--as`, `auth can-i`, `auth can-i --list`, `auth whoami`) and kube: denials are the
//! apiserver's 403 in its words, bindings grant exactly their rules.

mod clients;

use crate::common;

use common::{Kubectl, Out};
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, ListParams};

/// A namespace `shop` with a ServiceAccount `bot`, and a token for it from `kubectl create token`.
fn bot(k: &Kubectl) -> String {
    k.ok(&["create", "namespace", "shop"]);
    k.ok(&["create", "serviceaccount", "bot", "-n", "shop"]);
    let token = k.ok(&["create", "token", "bot", "-n", "shop"]);
    let token = token.trim().to_string();
    assert_eq!(token.split('.').count(), 3, "a JWT: {token}");
    token
}

/// kubectl as the token's user.
fn as_token(k: &Kubectl, token: &str, args: &[&str]) -> Out {
    let mut all = vec!["--token", token];
    all.extend_from_slice(args);
    k.run(&all)
}

fn can_i(k: &Kubectl, token: &str, args: &[&str]) -> (i32, String) {
    let mut all = vec!["auth", "can-i"];
    all.extend_from_slice(args);
    let out = as_token(k, token, &all);
    (out.code, out.stdout.trim().to_string())
}

const SA: &str = "system:serviceaccount:shop:bot";

#[test]
fn a_service_account_token_is_denied_until_a_role_binding_grants_it() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let token = bot(&k);
    let out = as_token(
        &k,
        &token,
        &[
            "auth",
            "whoami",
            "-o",
            "jsonpath={.status.userInfo.username}",
        ],
    );
    assert_eq!(out.stdout, SA, "{}", out.stderr);
    // As kube-apiserver's ServiceAccount authenticator: the token's jti is the credential id.
    let out = as_token(&k, &token, &["auth", "whoami"]);
    assert!(
        out.stdout.lines().any(|l| l
            .starts_with("Extra: authentication.kubernetes.io/credential-id")
            && l.trim_end().ends_with(']')
            && l.contains("[JTI=")),
        "{}",
        out.stdout
    );

    let out = as_token(&k, &token, &["get", "pods", "-n", "shop"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains(&format!(
            "Error from server (Forbidden): pods is forbidden: User \"{SA}\" cannot list resource \"pods\" in API group \"\" in the namespace \"shop\""
        )),
        "{}",
        out.stderr
    );
    assert_eq!(
        can_i(&k, &token, &["list", "pods", "-n", "shop"]),
        (1, "no".into())
    );

    k.ok(&[
        "create",
        "role",
        "reader",
        "--verb=get,list,watch",
        "--resource=pods,configmaps",
        "-n",
        "shop",
    ]);
    k.ok(&[
        "create",
        "rolebinding",
        "bot-reads",
        "--role=reader",
        "--serviceaccount=shop:bot",
        "-n",
        "shop",
    ]);
    let out = as_token(&k, &token, &["get", "pods", "-n", "shop"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        can_i(&k, &token, &["list", "pods", "-n", "shop"]),
        (0, "yes".into())
    );
    assert_eq!(
        can_i(&k, &token, &["watch", "configmaps", "-n", "shop"]),
        (0, "yes".into())
    );
    assert_eq!(
        can_i(&k, &token, &["delete", "pods", "-n", "shop"]),
        (1, "no".into())
    );
    // A RoleBinding grants nothing outside its namespace.
    assert_eq!(
        can_i(&k, &token, &["list", "pods", "-n", "default"]),
        (1, "no".into())
    );
    let out = as_token(&k, &token, &["create", "configmap", "c", "-n", "shop"]);
    assert!(
        out.stderr.contains(&format!(
            "configmaps is forbidden: User \"{SA}\" cannot create resource \"configmaps\" in API group \"\" in the namespace \"shop\""
        )),
        "{}",
        out.stderr
    );
    let list = as_token(&k, &token, &["auth", "can-i", "--list", "-n", "shop"]);
    let pods = list
        .stdout
        .lines()
        .find(|l| l.starts_with("pods "))
        .unwrap_or_else(|| panic!("{}", list.stdout));
    assert!(pods.contains("[get list watch]"), "{}", list.stdout);
    assert!(
        list.stdout
            .contains("selfsubjectaccessreviews.authorization.k8s.io"),
        "system:basic-user for every authenticated user: {}",
        list.stdout
    );
    // Discovery and /version are open to every authenticated user; other paths are not.
    assert_eq!(as_token(&k, &token, &["get", "--raw", "/version"]).code, 0);
    let out = as_token(&k, &token, &["get", "--raw", "/metrics"]);
    assert!(
        out.stderr.contains(&format!(
            "forbidden: User \"{SA}\" cannot get path \"/metrics\""
        )),
        "{}",
        out.stderr
    );
}

#[test]
fn tokens_end_with_their_service_account_and_have_a_minimum_duration() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let token = bot(&k);
    assert_eq!(as_token(&k, &token, &["auth", "whoami"]).code, 0);
    let out = as_token(&k, &format!("{token}x"), &["auth", "whoami"]);
    assert!(
        out.stderr.contains("Unauthorized"),
        "a tampered token: {}",
        out.stderr
    );
    let out = k.run(&["create", "token", "bot", "-n", "shop", "--duration=1m"]);
    assert!(
        out.stderr.contains("spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes"),
        "{}",
        out.stderr
    );
    let out = k.run(&["create", "token", "ghost", "-n", "shop"]);
    assert!(
        out.stderr.contains("serviceaccounts \"ghost\" not found"),
        "{}",
        out.stderr
    );
    // A token for another audience is not accepted here.
    let other = k.ok(&["create", "token", "bot", "-n", "shop", "--audience=vault"]);
    assert!(
        as_token(&k, other.trim(), &["auth", "whoami"])
            .stderr
            .contains("Unauthorized")
    );
    // Bound to a Secret: valid while the Secret lives.
    k.ok(&["create", "secret", "generic", "s", "-n", "shop"]);
    let bound = k.ok(&[
        "create",
        "token",
        "bot",
        "-n",
        "shop",
        "--bound-object-kind=Secret",
        "--bound-object-name=s",
    ]);
    assert_eq!(as_token(&k, bound.trim(), &["auth", "whoami"]).code, 0);
    k.ok(&["delete", "secret", "s", "-n", "shop"]);
    assert!(
        as_token(&k, bound.trim(), &["auth", "whoami"])
            .stderr
            .contains("Unauthorized")
    );
    // Deleting (and re-creating) the ServiceAccount ends its tokens.
    k.ok(&["delete", "serviceaccount", "bot", "-n", "shop"]);
    k.ok(&["create", "serviceaccount", "bot", "-n", "shop"]);
    let out = as_token(&k, &token, &["auth", "whoami"]);
    assert!(out.stderr.contains("Unauthorized"), "{}", out.stderr);
}

#[test]
fn rules_match_subresources_resource_names_and_aggregated_cluster_roles() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let token = bot(&k);
    let role = "apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: narrow, namespace: shop}
rules:
- {apiGroups: [''], resources: [configmaps], resourceNames: [settings], verbs: [get, update]}
- {apiGroups: [apps], resources: [deployments], verbs: [get]}
- {apiGroups: [apps], resources: [deployments/scale], verbs: [get, patch, update]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: aggregate-nodes}
aggregationRule:
  clusterRoleSelectors: [{matchLabels: {example.com/aggregate: 'true'}}]
rules: []
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: node-viewer, labels: {example.com/aggregate: 'true'}}
rules:
- {apiGroups: [''], resources: [nodes], verbs: [list]}
";
    k.ok(&["apply", "-f", &k.file("roles.yaml", role)]);
    k.ok(&[
        "create",
        "rolebinding",
        "narrow",
        "--role=narrow",
        "--serviceaccount=shop:bot",
        "-n",
        "shop",
    ]);
    k.ok(&[
        "create",
        "clusterrolebinding",
        "bot-nodes",
        "--clusterrole=aggregate-nodes",
        "--serviceaccount=shop:bot",
    ]);
    k.ok(&["create", "configmap", "settings", "-n", "shop"]);
    k.ok(&["create", "configmap", "other", "-n", "shop"]);
    k.ok(&["create", "deployment", "web", "--image=nginx", "-n", "shop"]);

    assert_eq!(
        as_token(&k, &token, &["get", "cm", "settings", "-n", "shop"]).code,
        0
    );
    let out = as_token(&k, &token, &["get", "cm", "other", "-n", "shop"]);
    assert!(
        out.stderr.contains(&format!(
            "configmaps \"other\" is forbidden: User \"{SA}\" cannot get resource \"configmaps\""
        )),
        "{}",
        out.stderr
    );
    let out = as_token(&k, &token, &["get", "cm", "-n", "shop"]);
    assert!(
        out.stderr.contains("cannot list resource \"configmaps\""),
        "resourceNames never grant list: {}",
        out.stderr
    );

    let out = as_token(
        &k,
        &token,
        &["scale", "deploy/web", "--replicas=3", "-n", "shop"],
    );
    assert_eq!(out.code, 0, "deployments/scale: {}", out.stderr);
    let out = as_token(&k, &token, &["label", "deploy/web", "a=b", "-n", "shop"]);
    assert!(
        out.stderr.contains("deployments.apps \"web\" is forbidden")
            && out
                .stderr
                .contains("cannot patch resource \"deployments\" in API group \"apps\""),
        "{}",
        out.stderr
    );
    assert_eq!(
        can_i(
            &k,
            &token,
            &["update", "deployments", "--subresource=scale", "-n", "shop"]
        ),
        (0, "yes".into())
    );
    assert_eq!(
        can_i(
            &k,
            &token,
            &[
                "update",
                "deployments",
                "--subresource=status",
                "-n",
                "shop"
            ]
        ),
        (1, "no".into())
    );
    // The aggregated ClusterRole carries node-viewer's rule; watch was not granted.
    assert_eq!(as_token(&k, &token, &["get", "nodes"]).code, 0);
    let out = as_token(
        &k,
        &token,
        &["get", "nodes", "--watch-only", "--request-timeout=5s"],
    );
    assert!(
        out.stderr.contains(&format!("nodes is forbidden: User \"{SA}\" cannot watch resource \"nodes\" in API group \"\" at the cluster scope")),
        "{}",
        out.stderr
    );
}

#[test]
fn the_status_and_finalizers_subresources_are_rules_of_their_own() {
    // What operators grant themselves: `update` on `<kind>/finalizers` (what the
    // OwnerReferencesPermissionEnforcement plugin asks of blockOwnerDeletion) and `<kind>/status`,
    // neither of which grants the object itself nor the other subresource.
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let token = bot(&k);
    let role = "apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: operator, namespace: shop}
rules:
- {apiGroups: [apps], resources: [deployments/finalizers], verbs: [update]}
- {apiGroups: [apps], resources: [deployments/status], verbs: [get, patch]}
";
    k.ok(&["apply", "-f", &k.file("operator.yaml", role)]);
    k.ok(&[
        "create",
        "rolebinding",
        "operator",
        "--role=operator",
        "--serviceaccount=shop:bot",
        "-n",
        "shop",
    ]);
    k.ok(&["create", "deployment", "web", "--image=nginx", "-n", "shop"]);
    let ns = ["-n", "shop"];
    let ask = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend_from_slice(&ns);
        can_i(&k, &token, &all)
    };
    let yes = (0, "yes".to_string());
    let no = (1, "no".to_string());
    assert_eq!(
        ask(&["update", "deployments", "--subresource=finalizers"]),
        yes
    );
    assert_eq!(ask(&["update", "deployments"]), no);
    assert_eq!(ask(&["update", "deployments", "--subresource=status"]), no);
    assert_eq!(ask(&["patch", "deployments", "--subresource=status"]), yes);
    assert_eq!(
        ask(&["patch", "deployments", "--subresource=finalizers"]),
        no
    );
    let out = as_token(
        &k,
        &token,
        &["get", "deploy", "web", "--subresource=status", "-n", "shop"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = as_token(
        &k,
        &token,
        &[
            "patch",
            "deploy",
            "web",
            "--subresource=status",
            "--type=merge",
            "-p",
            r#"{"status":{"observedGeneration":1}}"#,
            "-n",
            "shop",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = as_token(&k, &token, &["get", "deploy", "web", "-n", "shop"]);
    assert!(
        out.stderr.contains(&format!(
            "deployments.apps \"web\" is forbidden: User \"{SA}\" cannot get resource \"deployments\" in API group \"apps\" in the namespace \"shop\""
        )),
        "{}",
        out.stderr
    );
}

#[test]
fn kubectl_lists_the_bootstrap_policy_and_bindings_with_their_subjects() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let roles = k.ok(&["get", "clusterroles"]);
    assert!(roles.starts_with("NAME"), "{roles}");
    assert!(
        roles.lines().next().unwrap_or("").contains("CREATED AT"),
        "{roles}"
    );
    for name in [
        "cluster-admin",
        "system:discovery",
        "system:basic-user",
        "system:public-info-viewer",
    ] {
        assert!(
            roles.lines().any(|l| l.starts_with(&format!("{name} "))),
            "{name}: {roles}"
        );
    }
    k.ok(&["create", "namespace", "shop"]);
    k.ok(&[
        "create",
        "rolebinding",
        "mixed",
        "--clusterrole=view",
        "--user=alice",
        "--group=devs",
        "--serviceaccount=shop:bot",
        "-n",
        "shop",
    ]);
    let wide = k.ok(&["get", "rolebindings", "-n", "shop", "-o", "wide"]);
    let header: Vec<&str> = wide
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"],
        "{wide}"
    );
    let row: Vec<&str> = wide
        .lines()
        .nth(1)
        .unwrap_or("")
        .split_whitespace()
        .collect();
    assert_eq!((row[0], row[1]), ("mixed", "ClusterRole/view"), "{wide}");
    assert_eq!(row[3..], ["alice", "devs", "shop/bot"], "{wide}");
}
