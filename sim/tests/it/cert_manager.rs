//! The built-in cert-manager (`--cert-manager`), driven by the real kubectl: the cert-manager.io/v1
//! kinds are served; a selfSigned Issuer → CA Certificate → CA Issuer → serving Certificate chain
//! (what an operator's manifests declare) ends in a Secret whose key and certificate complete a real
//! TLS handshake for the Service's name against its `ca.crt`; that CA is injected into the webhook
//! configuration annotated `cert-manager.io/inject-ca-from`; a Certificate is renewed before it
//! expires.

use crate::common;

use std::sync::Arc;

use base64::Engine;
use common::{Kubectl, eventually, json_of};
use piceli_sim::{Sim, SimConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const CHAIN: &str = include_str!("../data/cert-manager-chain.yaml");

const WEBHOOK: &str = r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: guard
  annotations: {cert-manager.io/inject-ca-from: guard-system/guard-tls}
webhooks:
- name: no-latest-tag.guard.piceli.dev
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Ignore
  clientConfig:
    service: {namespace: guard-system, name: guard, path: /validate/no-latest-tag, port: 443}
  rules:
  - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
"#;

fn secret_pem(k: &Kubectl, name: &str, key: &str) -> String {
    let secret = json_of(&k.ok(&["get", "secret", name, "-n", "guard-system", "-o", "json"]));
    let b64 = secret["data"][key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} in {secret}"));
    String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(b64)
            .expect("base64"),
    )
    .expect("PEM text")
}

/// A TLS server with `cert`/`key` on loopback and a client trusting only `ca` for `name`: whether
/// the handshake (and one byte each way) succeeds.
async fn handshake(cert: &str, key: &str, ca: &str, name: &str) -> Result<(), String> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};
    piceli_net::tls::install_default();
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert.as_bytes())
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let key = PrivateKeyDer::from_pem_slice(key.as_bytes()).map_err(|e| e.to_string())?;
    let server = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| e.to_string())?;
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(ca.as_bytes()) {
        roots
            .add(c.map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    }
    let client = rustls::ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server));
    let served = tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.map_err(|e| e.to_string())?;
        let mut tls = acceptor.accept(tcp).await.map_err(|e| e.to_string())?;
        let mut b = [0u8; 1];
        tls.read_exact(&mut b).await.map_err(|e| e.to_string())?;
        tls.write_all(&b).await.map_err(|e| e.to_string())?;
        tls.flush().await.map_err(|e| e.to_string())
    });
    let tcp = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| e.to_string())?;
    let connector = tokio_rustls::TlsConnector::from(Arc::new(client));
    let server_name = ServerName::try_from(name.to_string()).map_err(|e| e.to_string())?;
    let mut tls = connector
        .connect(server_name, tcp)
        .await
        .map_err(|e| e.to_string())?;
    tls.write_all(b"x").await.map_err(|e| e.to_string())?;
    let mut b = [0u8; 1];
    tls.read_exact(&mut b).await.map_err(|e| e.to_string())?;
    served.await.map_err(|e| e.to_string())?
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_cert_manager_chain_issues_a_serving_certificate_and_injects_its_ca() {
    let sim = Sim::start(SimConfig {
        cert_manager: true,
        ..Default::default()
    })
    .expect("simulator starts");
    let k = Kubectl::new(&sim);
    let kinds = k.ok(&["api-resources", "--api-group=cert-manager.io", "-o", "name"]);
    for kind in [
        "certificates.cert-manager.io",
        "issuers.cert-manager.io",
        "clusterissuers.cert-manager.io",
    ] {
        assert!(kinds.contains(kind), "{kinds}");
    }
    k.ok(&["apply", "-f", &k.file("chain.yaml", CHAIN)]);
    k.ok(&["apply", "-f", &k.file("webhook.yaml", WEBHOOK)]);
    k.ok(&[
        "wait",
        "--for=condition=Ready",
        "certificate/guard-ca",
        "certificate/guard-tls",
        "issuer/guard-ca",
        "-n",
        "guard-system",
        "--timeout=30s",
    ]);
    let table = k.ok(&["get", "certificates", "-n", "guard-system"]);
    assert!(
        table
            .lines()
            .next()
            .is_some_and(|h| h.contains("READY") && h.contains("SECRET")),
        "{table}"
    );
    assert!(table.contains("guard-tls   True    guard-tls"), "{table}");

    let ca = secret_pem(&k, "guard-ca", "tls.crt");
    let cert = secret_pem(&k, "guard-tls", "tls.crt");
    let key = secret_pem(&k, "guard-tls", "tls.key");
    assert_eq!(
        secret_pem(&k, "guard-tls", "ca.crt"),
        ca,
        "ca.crt is the CA Issuer's"
    );
    let secret = json_of(&k.ok(&[
        "get",
        "secret",
        "guard-tls",
        "-n",
        "guard-system",
        "-o",
        "json",
    ]));
    assert_eq!(secret["type"], "kubernetes.io/tls");
    assert_eq!(
        secret["metadata"]["annotations"]["cert-manager.io/certificate-name"],
        "guard-tls"
    );
    assert_eq!(
        secret["metadata"]["annotations"]["cert-manager.io/issuer-name"],
        "guard-ca"
    );
    handshake(&cert, &key, &ca, "guard.guard-system.svc")
        .await
        .expect("the issued key and certificate serve the Service's name, trusted by ca.crt");
    assert!(
        handshake(&cert, &key, &ca, "other.guard-system.svc")
            .await
            .is_err(),
        "the certificate names only the Service"
    );

    // cainjector: the annotated configuration carries the CA.
    let ca_b64 = base64::engine::general_purpose::STANDARD.encode(&ca);
    let bundle = eventually("caBundle injected", 20, || {
        let b = k.ok(&[
            "get",
            "validatingwebhookconfiguration",
            "guard",
            "-o",
            "jsonpath={.webhooks[0].clientConfig.caBundle}",
        ]);
        (!b.is_empty()).then_some(b)
    });
    assert_eq!(bundle, ca_b64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_certificates_are_renewed_before_they_expire() {
    let sim = Sim::start(SimConfig {
        cert_manager: true,
        ..Default::default()
    })
    .expect("simulator starts");
    let k = Kubectl::new(&sim);
    // Renewal 5 s after issuance: the three kubectl calls that read the first certificate must come
    // before it, also on a loaded machine (with 2 s they did not always).
    let short = r#"apiVersion: cert-manager.io/v1
kind: Issuer
metadata: {name: self, namespace: default}
spec: {selfSigned: {}}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: short, namespace: default}
spec:
  secretName: short-tls
  commonName: short
  dnsNames: [short.default.svc]
  duration: 1h
  renewBefore: 3595s
  privateKey: {algorithm: ECDSA}
  issuerRef: {name: self}
"#;
    k.ok(&["apply", "-f", &k.file("short.yaml", short)]);
    k.ok(&[
        "wait",
        "--for=condition=Ready",
        "certificate/short",
        "--timeout=30s",
    ]);
    let first = json_of(&k.ok(&["get", "certificate", "short", "-o", "json"]));
    let not_before = first["status"]["notBefore"]
        .as_str()
        .expect("notBefore")
        .to_string();
    let renewal = first["status"]["renewalTime"]
        .as_str()
        .expect("renewalTime")
        .to_string();
    assert_eq!(
        piceli_sim::time::parse_rfc3339(&renewal).expect("time")
            - piceli_sim::time::parse_rfc3339(&not_before).expect("time"),
        5,
        "renewal is renewBefore before notAfter: {first}"
    );
    let crt = || {
        let s = json_of(&k.ok(&["get", "secret", "short-tls", "-o", "json"]));
        s["data"]["tls.crt"].as_str().unwrap_or("").to_string()
    };
    let before = crt();
    let renewed = eventually("revision 2", 20, || {
        let c = json_of(&k.ok(&["get", "certificate", "short", "-o", "json"]));
        (c["status"]["revision"] == 2).then_some(c)
    });
    assert_ne!(crt(), before, "a new certificate in the Secret");
    assert_eq!(renewed["status"]["conditions"][0]["status"], "True");
}
