//! The order in which the handler chain's filters answer: authentication (401) before the head-size
//! check (431), the head-size check before impersonation and RBAC (403).

use crate::common::{self, api_error};

/// A list of ConfigMaps, with a header that takes the head past kube-apiserver's 1 MiB when `padded`,
/// and `Impersonate-User` when `as_user` is set.
fn list(padded: bool, as_user: Option<&str>) -> http::Request<Vec<u8>> {
    let mut req = http::Request::get("/api/v1/namespaces/default/configmaps");
    if padded {
        req = req.header("x-padding", "p".repeat(1024 * 1024));
    }
    if let Some(user) = as_user {
        req = req.header("impersonate-user", user);
    }
    req.body(Vec::new()).expect("request")
}

/// The status code of a request the server refuses.
async fn refused(client: &kube::Client, req: http::Request<Vec<u8>>) -> u16 {
    let err = client
        .request::<serde_json::Value>(req)
        .await
        .expect_err("refused");
    api_error(err).code
}

#[tokio::test]
async fn filters_answer_in_order() {
    let sim = common::sim();
    // The kubeconfig with a token the server never issued.
    let yaml: Vec<&str> = sim
        .kubeconfig_yaml()
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("token: ") {
                "    token: not-a-token"
            } else {
                l
            }
        })
        .collect();
    let kc = kube::config::Kubeconfig::from_yaml(&yaml.join("\n")).expect("kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .expect("config");
    let stranger = kube::Client::try_from(config).expect("client");
    assert_eq!(refused(&stranger, list(false, None)).await, 401);
    assert_eq!(refused(&stranger, list(true, None)).await, 401);

    let admin = sim.client().expect("client");
    assert_eq!(refused(&admin, list(false, Some("nobody"))).await, 403);
    assert_eq!(refused(&admin, list(true, Some("nobody"))).await, 431);
    assert_eq!(refused(&admin, list(true, None)).await, 431);
    admin
        .request::<serde_json::Value>(list(false, None))
        .await
        .expect("the admin's list");
}
