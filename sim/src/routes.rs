//! Service routes (`piceli sim route NS/SERVICE:PORT 127.0.0.1:PORT`, [`crate::RunningSim::route`]):
//! a Service port answered by a process on this machine, as if the Service's endpoints were it.
//! The API server dials the route for webhooks whose `clientConfig.service` names that Service and
//! port (TLS still verified for `SERVICE.NS.svc` against the webhook's `caBundle`), with or without
//! pods behind the Service. Routes live in the ConfigMap `kube-system/piceli-sim-routes` (key
//! `NS.SERVICE.PORT`, value `HOST:PORT`), so every server sharing a cluster directory sees them
//! and they survive restarts.

use std::net::SocketAddr;

use serde_json::json;

use crate::cluster::Cluster;
use crate::status::ApiError;
use crate::storage::Store;

/// The namespace and name of the ConfigMap holding the routes.
pub const CONFIGMAP: (&str, &str) = ("kube-system", "piceli-sim-routes");
/// The field manager route writes use.
pub const MANAGER: &str = "piceli-sim-route";

/// The ConfigMap key of a Service port.
pub fn key(namespace: &str, service: &str, port: u16) -> String {
    format!("{namespace}.{service}.{port}")
}

/// Parses `NS/SERVICE:PORT` (the port defaults to 443, as a webhook's service port does).
pub fn parse_target(text: &str) -> Result<(String, String, u16), String> {
    let bad = || format!("{text:?} is not NAMESPACE/SERVICE[:PORT] (e.g. guard-system/guard:443)");
    let (ns, rest) = text.split_once('/').ok_or_else(bad)?;
    let (svc, port) = match rest.split_once(':') {
        Some((s, p)) => (s, p.parse::<u16>().map_err(|_| bad())?),
        None => (rest, 443),
    };
    let label = |s: &str| crate::registry::validate::is_dns_label(s);
    if !label(ns) || !label(svc) || port == 0 {
        return Err(bad());
    }
    Ok((ns.to_string(), svc.to_string(), port))
}

/// Where a Service port is routed, if it is.
pub fn lookup(store: &Store, namespace: &str, service: &str, port: u16) -> Option<SocketAddr> {
    let (ns, name) = CONFIGMAP;
    let cm = store.get("/configmaps", ns, name).ok()??;
    cm.pointer(&format!("/data/{}", key(namespace, service, port)))?
        .as_str()?
        .parse()
        .ok()
}

/// Routes a Service port to `to`, or removes its route (`None`).
pub fn set(
    cluster: &Cluster,
    namespace: &str,
    service: &str,
    port: u16,
    to: Option<SocketAddr>,
) -> Result<(), ApiError> {
    let rt = cluster.rt("", "v1", "configmaps")?;
    let (ns, name) = CONFIGMAP;
    let k = key(namespace, service, port);
    let value = to.map(|a| json!(a.to_string()));
    if cluster.get(&rt, ns, name)?.is_none() {
        let Some(value) = value else { return Ok(()) };
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": ns}, "data": {k: value}});
        return cluster.create(&rt, ns, cm, MANAGER).map(|_| ());
    }
    let result = cluster.update(&rt, ns, name, "", MANAGER, |o| {
        let data = &mut o["data"];
        if !data.is_object() {
            *data = json!({});
        }
        let before = data.get(&k).cloned();
        match &value {
            Some(v) => data[&k] = v.clone(),
            None => {
                if let Some(m) = data.as_object_mut() {
                    m.remove(&k);
                }
            }
        }
        data.get(&k).cloned() != before
    });
    match result {
        Err(e) if e.code == 400 && e.message == "unchanged" => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse() {
        assert_eq!(
            parse_target("guard-system/guard:443"),
            Ok(("guard-system".into(), "guard".into(), 443))
        );
        assert_eq!(parse_target("a/b"), Ok(("a".into(), "b".into(), 443)));
        assert!(parse_target("guard").is_err());
        assert!(parse_target("a/b:x").is_err());
        assert!(parse_target("A/b:1").is_err());
    }
}
