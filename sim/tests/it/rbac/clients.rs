//! Impersonation, kube clients' forbidden errors, and what a server-side apply that creates needs.

use super::*;

#[test]
fn impersonation_needs_the_impersonate_verb_and_takes_user_and_groups() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let token = bot(&k);
    let out = k.run(&["get", "pods", "--as=alice"]);
    assert!(
        out.stderr.contains("pods is forbidden: User \"alice\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\""),
        "{}",
        out.stderr
    );
    k.ok(&[
        "create",
        "clusterrole",
        "pod-reader",
        "--verb=list",
        "--resource=pods",
    ]);
    k.ok(&[
        "create",
        "clusterrolebinding",
        "devs-read",
        "--clusterrole=pod-reader",
        "--group=devs",
    ]);
    assert_eq!(
        k.run(&["get", "pods", "--as=alice", "--as-group=devs"])
            .code,
        0
    );
    assert_eq!(
        k.run(&[
            "auth",
            "can-i",
            "list",
            "pods",
            "--as=system:serviceaccount:shop:bot"
        ])
        .stdout
        .trim(),
        "no"
    );
    // Only those granted `impersonate` may impersonate.
    let out = as_token(&k, &token, &["get", "pods", "--as=alice"]);
    assert!(
        out.stderr.contains(&format!("users \"alice\" is forbidden: User \"{SA}\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope")),
        "{}",
        out.stderr
    );
    k.ok(&[
        "create",
        "clusterrole",
        "impersonator",
        "--verb=impersonate",
        "--resource=users,groups",
    ]);
    k.ok(&[
        "create",
        "clusterrolebinding",
        "bot-impersonates",
        "--clusterrole=impersonator",
        "--serviceaccount=shop:bot",
    ]);
    assert_eq!(
        as_token(
            &k,
            &token,
            &["get", "pods", "--as=alice", "--as-group=devs"]
        )
        .code,
        0
    );
}

/// A kube client of `sim` that authenticates with `token` instead of the admin token.
async fn client_with(sim: &piceli_sim::RunningSim, token: &str) -> kube::Client {
    let yaml = sim.kubeconfig_yaml();
    let admin = yaml
        .lines()
        .find_map(|l| l.trim().strip_prefix("token:"))
        .expect("admin token")
        .trim();
    let kc = kube::config::Kubeconfig::from_yaml(&yaml.replace(admin, token)).expect("kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .expect("config");
    kube::Client::try_from(config).expect("client")
}

#[test]
fn kube_clients_get_forbidden_errors_and_no_rbac_turns_it_off() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let token = bot(&k);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let err = rt
        .block_on(async {
            let c = client_with(&sim, &token).await;
            Api::<Pod>::namespaced(c, "shop")
                .list(&ListParams::default())
                .await
        })
        .expect_err("forbidden");
    let status = common::api_error(err);
    assert_eq!((status.code, status.reason.as_str()), (403, "Forbidden"));
    assert!(status.message.contains(SA), "{}", status.message);

    let mut config = piceli_sim::SimConfig::default();
    config.controllers.enabled = false;
    config.no_rbac = true;
    let open = piceli_sim::Sim::start(config).expect("sim");
    let token = bot(&Kubectl::new(&open));
    rt.block_on(async {
        let c = client_with(&open, &token).await;
        Api::<ConfigMap>::namespaced(c, "shop")
            .list(&ListParams::default())
            .await
    })
    .expect("allowed without RBAC");
}

#[test]
fn a_server_side_apply_that_creates_needs_create_and_the_recorder_names_the_binding() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let token = bot(&k);
    k.ok(&[
        "create",
        "role",
        "patcher",
        "-n",
        "shop",
        "--verb=patch",
        "--resource=configmaps",
    ]);
    k.ok(&[
        "create",
        "rolebinding",
        "patcher",
        "-n",
        "shop",
        "--role=patcher",
        "--serviceaccount=shop:bot",
    ]);
    sim.record_rbac();
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: made, namespace: shop}\ndata: {a: \"1\"}\n";
    let mut args = vec!["--token", token.as_str()];
    args.extend(["apply", "--server-side", "-f", "-"]);
    let out = k.run_stdin(&args, Some(cm));
    assert_ne!(out.code, 0, "patch alone does not create: {}", out.stdout);
    assert!(
        out.stderr.contains(&format!(
            "User \"{SA}\" cannot create resource \"configmaps\""
        )),
        "{}",
        out.stderr
    );
    k.ok(&[
        "create",
        "role",
        "creator",
        "-n",
        "shop",
        "--verb=create",
        "--resource=configmaps",
    ]);
    k.ok(&[
        "create",
        "rolebinding",
        "creator",
        "-n",
        "shop",
        "--role=creator",
        "--serviceaccount=shop:bot",
    ]);
    let out = k.run_stdin(&args, Some(cm));
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let uses: Vec<_> = sim
        .rbac_uses()
        .into_iter()
        .filter(|u| u.user == SA)
        .collect();
    let by = |verb: &str| {
        uses.iter()
            .find(|u| u.verb == verb && u.resource == "configmaps" && u.namespace == "shop")
            .map(|u| u.allowed_by.clone())
    };
    assert!(
        by("patch").is_some_and(|b| b.contains("of Role \"patcher\"")),
        "{uses:#?}"
    );
    assert!(
        by("create").is_some_and(|b| b.contains("of Role \"creator\"")),
        "{uses:#?}"
    );
}
