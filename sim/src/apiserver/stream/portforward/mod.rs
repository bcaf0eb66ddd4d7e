//! The `pods/portforward` subresource: checks the pod, negotiates the protocol and upgrades the
//! connection, then hands it to one of the stream protocols:
//!
//! - WebSocket with a channel subprotocol (`v4.channel.k8s.io`, `portforward.k8s.io`,
//!   `v5.channel.k8s.io`, or none): kube's `Portforwarder` ([`channel`]);
//! - WebSocket with `SPDY/3.1+portforward.k8s.io`: SPDY/3.1 frames tunnelled in binary messages,
//!   kubectl's default ([`spdy`]);
//! - HTTP/1.1 `Upgrade: SPDY/3.1` with `X-Stream-Protocol-Version: portforward.k8s.io`: plain SPDY,
//!   kubectl's fallback ([`spdy`]).
//!
//! Each forwarded connection reaches the address the pod's port is mapped to
//! ([`crate::hooks::Hooks::resolve_port`]) or else the built-in responder ([`target`]).

pub mod channel;
pub mod responder;
pub mod spdy;
pub mod target;

use std::sync::Arc;

use http::{HeaderMap, HeaderValue, Request, header};
use serde_json::Value;

use crate::apiserver::app::App;
use crate::apiserver::http::{Query, Resp, error};
use crate::cluster::Cluster;
use crate::status::ApiError;

/// The WebSocket subprotocol of SPDY tunnelled over WebSocket (kubectl 1.30+).
pub const SPDY_TUNNEL: &str = "SPDY/3.1+portforward.k8s.io";
/// The stream protocol of the plain SPDY upgrade.
pub const PORTFORWARD_V1: &str = "portforward.k8s.io";

/// Which channel framing a WebSocket client asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelProto {
    /// `v4.channel.k8s.io`, `portforward.k8s.io` or no subprotocol: binary channel framing.
    V4,
    /// `v5.channel.k8s.io`: as v4, plus the close signal (channel 255).
    V5,
}

/// The protocol a request negotiates.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Mode {
    /// WebSocket channels; the subprotocol to answer with (if any).
    Channels(ChannelProto, Option<&'static str>),
    /// SPDY/3.1 over WebSocket.
    SpdyTunnel,
    /// SPDY/3.1 over the upgraded HTTP/1.1 connection.
    Spdy,
}

/// Answers `pods/portforward` requests.
pub async fn handle(
    app: Arc<App>,
    mut req: Request<hyper::body::Incoming>,
    ns: &str,
    pod: &str,
) -> Resp {
    let query = Query::parse(req.uri().query().unwrap_or(""));
    // PodPortForwardOptions are decoded before the pod is read (a 400).
    if let Err(e) = decode_ports(&query) {
        return error(&e);
    }
    let pod_obj = match running_pod(&app.cluster(), ns, pod) {
        Ok(p) => p,
        Err(e) => return error(&e),
    };
    let mode = match negotiate(req.headers()) {
        Ok(m) => m,
        Err(e) => return error(&e),
    };
    let ports = match &mode {
        Mode::Channels(..) => match ports(&query) {
            Ok(p) => p,
            Err(e) => return error(&e),
        },
        _ => Vec::new(),
    };
    let on_upgrade = hyper::upgrade::on(&mut req);
    let mut resp = super::switching_protocols();
    let h = resp.headers_mut();
    match &mode {
        Mode::Spdy => {
            h.insert(header::UPGRADE, HeaderValue::from_static("SPDY/3.1"));
            h.insert(
                "X-Stream-Protocol-Version",
                HeaderValue::from_static(PORTFORWARD_V1),
            );
        }
        Mode::Channels(_, proto) => {
            super::websocket_headers(h, req.headers(), *proto);
        }
        Mode::SpdyTunnel => {
            super::websocket_headers(h, req.headers(), Some(SPDY_TUNNEL));
        }
    }
    tokio::spawn(async move {
        let Ok(upgraded) = on_upgrade.await else {
            return;
        };
        let io = hyper_util::rt::TokioIo::new(upgraded);
        match mode {
            Mode::Channels(proto, _) => {
                channel::serve(app.cluster(), pod_obj, ports, proto, io).await
            }
            Mode::SpdyTunnel => spdy::serve_websocket(app, pod_obj, io).await,
            Mode::Spdy => spdy::serve_plain(app, pod_obj, io).await,
        }
    });
    resp
}

/// The pod, if it exists and runs (the real API server refuses pods without a node, the kubelet
/// pods that are not running).
fn running_pod(cluster: &Cluster, ns: &str, name: &str) -> Result<Value, ApiError> {
    let rt = cluster
        .rt("", "v1", "pods")
        .map_err(|_| ApiError::no_route())?;
    let pod = cluster
        .get(&rt, ns, name)?
        .ok_or_else(|| ApiError::not_found("", "pods", name))?;
    let node = pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .unwrap_or("");
    if node.is_empty() {
        return Err(ApiError::bad_request(format!(
            "pod {name} does not have a host assigned"
        )));
    }
    let phase = pod
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or("Pending");
    if phase != "Running" {
        return Err(ApiError::bad_request(format!(
            "unable to forward ports: pod {name} is not running (phase {phase})"
        )));
    }
    Ok(pod)
}

/// `ports` decoded as the apiserver's parameter codec does (`Convert_Slice_string_To_Slice_int32`):
/// every comma-separated piece a 16-bit number.
fn decode_ports(q: &Query) -> Result<(), ApiError> {
    for v in q.all("ports") {
        for p in v.split(',') {
            if p.parse::<u16>().is_err() || p.starts_with('+') {
                let why = if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) {
                    "value out of range"
                } else {
                    "invalid syntax"
                };
                return Err(ApiError::bad_request(format!(
                    "cannot convert to []int32: strconv.ParseUint: parsing {}: {why}",
                    crate::go_text::quote(p)
                )));
            }
        }
    }
    Ok(())
}

/// The ports of the `ports` query parameter (repeatable, each a comma-separated list).
pub fn ports(q: &Query) -> Result<Vec<u16>, ApiError> {
    let mut out = Vec::new();
    for v in q.all("ports") {
        for p in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match p.parse::<u16>() {
                Ok(n) if n > 0 => out.push(n),
                _ => {
                    return Err(ApiError::bad_request(format!(
                        "error parsing ports: invalid port {p:?}"
                    )));
                }
            }
        }
    }
    if out.is_empty() {
        return Err(ApiError::bad_request(
            "query parameter \"port\" is required",
        ));
    }
    Ok(out)
}

fn header_values(h: &HeaderMap, name: &str) -> Vec<String> {
    h.get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect()
}

/// Picks the protocol from the upgrade headers.
fn negotiate(h: &HeaderMap) -> Result<Mode, ApiError> {
    let upgrade = header_values(h, "upgrade");
    if upgrade.iter().any(|u| u.eq_ignore_ascii_case("websocket")) {
        if h.get(header::SEC_WEBSOCKET_KEY).is_none() {
            return Err(ApiError::bad_request("missing Sec-WebSocket-Key header"));
        }
        let offered = header_values(h, "sec-websocket-protocol");
        if offered.is_empty() {
            return Ok(Mode::Channels(ChannelProto::V4, None));
        }
        let has = |p: &str| offered.iter().any(|o| o == p);
        return if has(SPDY_TUNNEL) {
            Ok(Mode::SpdyTunnel)
        } else if has("v4.channel.k8s.io") {
            Ok(Mode::Channels(ChannelProto::V4, Some("v4.channel.k8s.io")))
        } else if has(PORTFORWARD_V1) {
            Ok(Mode::Channels(ChannelProto::V4, Some(PORTFORWARD_V1)))
        } else if has("v5.channel.k8s.io") {
            Ok(Mode::Channels(ChannelProto::V5, Some("v5.channel.k8s.io")))
        } else {
            Err(ApiError::bad_request(format!(
                "unable to upgrade: none of the offered websocket protocols {offered:?} is supported"
            )))
        };
    }
    if upgrade.iter().any(|u| u.eq_ignore_ascii_case("SPDY/3.1")) {
        let versions = header_values(h, "x-stream-protocol-version");
        if !versions.is_empty() && !versions.iter().any(|v| v == PORTFORWARD_V1) {
            return Err(ApiError::forbidden(format!(
                "unable to upgrade: unable to negotiate protocol: client supports {versions:?}, server supports [\"{PORTFORWARD_V1}\"]"
            )));
        }
        return Ok(Mode::Spdy);
    }
    Err(ApiError::bad_request("Upgrade request required"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_repeatable_or_comma_separated() {
        let q = Query::parse("ports=80%2C1234&ports=9090");
        assert_eq!(ports(&q).unwrap(), vec![80, 1234, 9090]);
        assert!(ports(&Query::parse("ports=0")).is_err());
        assert!(ports(&Query::parse("ports=x")).is_err());
        assert!(ports(&Query::parse("")).is_err());
        assert!(decode_ports(&Query::parse("ports=80,443&ports=8080")).is_ok());
        assert_eq!(
            decode_ports(&Query::parse("ports=4476681"))
                .expect_err("too big")
                .message,
            "cannot convert to []int32: strconv.ParseUint: parsing \"4476681\": value out of range"
        );
        assert!(decode_ports(&Query::parse("ports=true")).is_err());
    }

    #[test]
    fn negotiation_prefers_the_tunnel_then_v4() {
        let mut h = HeaderMap::new();
        h.insert("upgrade", HeaderValue::from_static("websocket"));
        h.insert("sec-websocket-key", HeaderValue::from_static("x"));
        h.insert(
            "sec-websocket-protocol",
            HeaderValue::from_static("v5.channel.k8s.io, v4.channel.k8s.io"),
        );
        assert_eq!(
            negotiate(&h).unwrap(),
            Mode::Channels(ChannelProto::V4, Some("v4.channel.k8s.io"))
        );
        h.insert(
            "sec-websocket-protocol",
            HeaderValue::from_static(SPDY_TUNNEL),
        );
        assert_eq!(negotiate(&h).unwrap(), Mode::SpdyTunnel);
        let mut s = HeaderMap::new();
        s.insert("upgrade", HeaderValue::from_static("SPDY/3.1"));
        s.insert(
            "x-stream-protocol-version",
            HeaderValue::from_static(PORTFORWARD_V1),
        );
        assert_eq!(negotiate(&s).unwrap(), Mode::Spdy);
        assert_eq!(negotiate(&HeaderMap::new()).unwrap_err().code, 400);
    }
}
