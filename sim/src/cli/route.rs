//! `piceli sim route`: writes a Service route ([`crate::routes`]) through the running server's API
//! (the directory's kubeconfig, admin token), so every server sharing the directory sees it.

use std::net::SocketAddr;
use std::path::Path;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use super::CliError;
use crate::routes;

async fn client(dir: &Path) -> Result<kube::Client, CliError> {
    let path = dir.join("kubeconfig");
    let kc = kube::config::Kubeconfig::read_from(&path)
        .map_err(|_| CliError::NotRunning(dir.to_path_buf()))?;
    let opts = kube::config::KubeConfigOptions {
        context: Some(crate::apiserver::kubeconfig::CONTEXT.to_string()),
        ..Default::default()
    };
    let config = kube::Config::from_custom_kubeconfig(kc, &opts)
        .await
        .map_err(|e| CliError::Other(format!("{}: {e}", path.display())))?;
    kube::Client::try_from(config).map_err(|e| CliError::Other(e.to_string()))
}

fn api_error(dir: &Path, e: kube::Error) -> CliError {
    match e {
        kube::Error::Api(s) => CliError::Other(s.message),
        other => CliError::Other(format!(
            "cannot reach the cluster of {} ({other}); is it running (`piceli sim status`)?",
            dir.display()
        )),
    }
}

async fn route(
    dir: &Path,
    target: Option<&str>,
    address: Option<SocketAddr>,
    delete: bool,
) -> Result<(), CliError> {
    let api: Api<ConfigMap> = Api::namespaced(client(dir).await?, routes::CONFIGMAP.0);
    let name = routes::CONFIGMAP.1;
    let Some(target) = target else {
        // No target: list the routes.
        let data = match api.get_opt(name).await.map_err(|e| api_error(dir, e))? {
            Some(cm) => cm.data.unwrap_or_default(),
            None => Default::default(),
        };
        for (k, v) in data {
            let mut parts = k.splitn(3, '.');
            if let (Some(n), Some(s), Some(p)) = (parts.next(), parts.next(), parts.next()) {
                println!("{n}/{s}:{p} -> {v}");
            }
        }
        return Ok(());
    };
    let (ns, svc, port) = routes::parse_target(target).map_err(CliError::Usage)?;
    let key = routes::key(&ns, &svc, port);
    let value = match (address, delete) {
        (Some(_), true) => {
            return Err(CliError::Usage(
                "give an address to route to, or --delete, not both".into(),
            ));
        }
        (None, false) => {
            return Err(CliError::Usage(format!(
                "where is {target} served? e.g. `piceli sim route --dir {} {target} 127.0.0.1:8443`",
                dir.display()
            )));
        }
        (Some(a), false) => json!(a.to_string()),
        (None, true) => serde_json::Value::Null,
    };
    if api
        .get_opt(name)
        .await
        .map_err(|e| api_error(dir, e))?
        .is_none()
    {
        if delete {
            return Ok(());
        }
        let cm: ConfigMap = serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": routes::CONFIGMAP.0},
        }))
        .map_err(|e| CliError::Other(e.to_string()))?;
        let pp = PostParams {
            field_manager: Some(routes::MANAGER.into()),
            ..Default::default()
        };
        match api.create(&pp, &cm).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => return Err(api_error(dir, e)),
        }
    }
    let pp = PatchParams {
        field_manager: Some(routes::MANAGER.into()),
        ..Default::default()
    };
    api.patch(name, &pp, &Patch::Merge(json!({"data": {key: value}})))
        .await
        .map_err(|e| api_error(dir, e))?;
    match address {
        Some(a) => println!("{ns}/{svc}:{port} -> {a}"),
        None => println!("{ns}/{svc}:{port} no longer routed"),
    }
    Ok(())
}

/// Runs `piceli sim route`.
pub fn run(
    dir: &Path,
    target: Option<&str>,
    address: Option<SocketAddr>,
    delete: bool,
) -> Result<(), CliError> {
    piceli_net::tls::install_default();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Other(e.to_string()))?;
    rt.block_on(route(dir, target, address, delete))
}
