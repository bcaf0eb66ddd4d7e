//! Generated secrets, end to end (in process, on the local cluster or on the real control plane of
//! `PICELI_REAL_KUBECONFIG`): the first apply generates every value (random text, the older
//! `generated(length)`, a template of other keys, a CA, a certificate it signs and a self-signed one with
//! the right hosts and validity); a second release that changes something else keeps every generated value
//! byte for byte and generates a key it adds; `plan --rotate db.password` changes that key and the template
//! naming it, nothing else, as an `update` whose hash differs from the plan without it; rotating the CA
//! signs its certificate again; an unknown name is refused with a suggestion; `status` reports each
//! certificate's days left; and no value is written in clear in the state directory.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use piceli::k8s_openapi::api::core::v1::Secret;
use piceli::runtime::Coded;
use piceli::runtime::engine::conflicts::TakeOwnership;
use piceli::runtime::engine::plan::{Action, ActionKind, Plan};
use piceli::runtime::engine::session::Session;
use piceli_test_support::Cluster;
use std::collections::BTreeMap;
use x509_parser::prelude::*;

const NS: &str = "gensec";

mod v1 {
    piceli::app! {
        app gen-secrets;
        target local = local(namespace: "gensec");
        secret db {
            password: generate(random(24)),
            legacy: generated(length: 16),
            url: generate(template("postgres://app:{password}@db/app")),
        }
        secret ca { tls: generate(tls_self_signed(hosts: ["gen-ca"], days: 3650, ca: true)) }
        secret web-tls { tls: generate(tls_signed_by(ca, hosts: ["web", "web.gensec.svc"], days: 90)) }
        secret self-tls { tls: generate(tls_self_signed(hosts: ["db", "10.0.0.7"], days: 365)) }
        config_map settings { mode: "a" }
    }
}

mod v2 {
    piceli::app! {
        app gen-secrets;
        target local = local(namespace: "gensec");
        secret db {
            password: generate(random(24)),
            legacy: generated(length: 16),
            url: generate(template("postgres://app:{password}@db/app")),
            extra: generate(random(12)),
        }
        secret ca { tls: generate(tls_self_signed(hosts: ["gen-ca"], days: 3650, ca: true)) }
        secret web-tls { tls: generate(tls_signed_by(ca, hosts: ["web", "web.gensec.svc"], days: 90)) }
        secret self-tls { tls: generate(tls_self_signed(hosts: ["db", "10.0.0.7"], days: 365)) }
        config_map settings { mode: "b" }
    }
}

use crate::cluster_session::options;

/// Secret name → data key → bytes, as live.
type Values = BTreeMap<String, BTreeMap<String, Vec<u8>>>;

async fn live(cluster: &Cluster) -> Values {
    let api: kube::Api<Secret> = kube::Api::namespaced(cluster.client().expect("client"), NS);
    let mut out = Values::new();
    for name in ["db", "ca", "web-tls", "self-tls"] {
        let s = api.get(name).await.expect("secret");
        let data = s
            .data
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| (k, v.0))
            .collect();
        out.insert(name.to_string(), data);
    }
    out
}

async fn secret_type(cluster: &Cluster, name: &str) -> Option<String> {
    let api: kube::Api<Secret> = kube::Api::namespaced(cluster.client().expect("client"), NS);
    api.get(name).await.expect("secret").type_
}

fn text(v: &Values, secret: &str, key: &str) -> String {
    String::from_utf8(v[secret][key].clone()).expect("utf-8")
}

fn action<'p>(plan: &'p Plan, kind: &str, name: &str) -> &'p Action {
    plan.actions
        .iter()
        .find(|a| a.object.kind == kind && a.object.name == name)
        .unwrap_or_else(|| panic!("no {kind}/{name} in the plan"))
}

/// A certificate's SANs (DNS names, and IPs as text), validity in days, issuer and whether it is a CA.
fn certificate(pem: &[u8]) -> (Vec<String>, i64, String, bool) {
    let (_, pem) = x509_parser::pem::parse_x509_pem(pem).expect("pem");
    let cert = pem.parse_x509().expect("x509");
    let sans = cert
        .subject_alternative_name()
        .expect("san")
        .map(|s| {
            s.value
                .general_names
                .iter()
                .map(|n| match n {
                    GeneralName::DNSName(d) => d.to_string(),
                    GeneralName::IPAddress(ip) => {
                        ip.iter().map(u8::to_string).collect::<Vec<_>>().join(".")
                    }
                    other => format!("{other:?}"),
                })
                .collect()
        })
        .unwrap_or_default();
    let v = cert.validity();
    let days = (v.not_after.timestamp() - v.not_before.timestamp() + 3600) / 86_400;
    (sans, days, cert.issuer().to_string(), cert.is_ca())
}

/// Whether `leaf` is signed by `ca`'s key.
fn signed_by(leaf: &[u8], ca: &[u8]) -> bool {
    let (_, leaf) = x509_parser::pem::parse_x509_pem(leaf).expect("pem");
    let (_, ca) = x509_parser::pem::parse_x509_pem(ca).expect("pem");
    let (leaf, ca) = (
        leaf.parse_x509().expect("x509"),
        ca.parse_x509().expect("x509"),
    );
    leaf.verify_signature(Some(ca.public_key())).is_ok()
}

/// Every file under `dir`, read whole.
fn files(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push((path, bytes));
        }
    }
    out
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_values_are_kept_across_releases_and_rotated_on_purpose() {
    let cluster = Cluster::start();
    let state = tempfile::tempdir().expect("state dir");
    let opts = options(&cluster, state.path());

    // Release 1 generates every value.
    let first = Session::open(v1::gen_secrets::app(), &opts)
        .await
        .expect("session");
    let plan = first.plan(vec![], false).await.expect("plan 1");
    let db = action(&plan, "Secret", "db");
    assert_eq!(db.action, ActionKind::Create);
    assert!(
        db.generated.iter().all(|g| g.state == "generate"),
        "{:?}",
        db.generated
    );
    first.apply(&plan.hash).await.expect("release 1");
    let one = live(&cluster).await;
    let password = text(&one, "db", "password");
    assert_eq!(password.len(), 24);
    assert!(password.bytes().all(|b| b.is_ascii_alphanumeric()));
    assert_eq!(text(&one, "db", "legacy").len(), 16);
    assert_eq!(
        text(&one, "db", "url"),
        format!("postgres://app:{password}@db/app")
    );
    // The certificates: hosts, validity, issuer, chain.
    let (sans, days, issuer, is_ca) = certificate(&one["self-tls"]["tls.crt"]);
    assert_eq!(sans, ["db", "10.0.0.7"]);
    assert_eq!(days, 365);
    assert_eq!(issuer, "CN=db");
    assert!(!is_ca);
    assert!(text(&one, "self-tls", "tls.key").contains("PRIVATE KEY"));
    let (_, ca_days, _, ca_is_ca) = certificate(&one["ca"]["tls.crt"]);
    assert_eq!((ca_days, ca_is_ca), (3650, true));
    let (sans, days, issuer, is_ca) = certificate(&one["web-tls"]["tls.crt"]);
    assert_eq!(
        (sans, days, is_ca),
        (vec!["web".into(), "web.gensec.svc".into()], 90, false)
    );
    assert_eq!(issuer, "CN=gen-ca");
    assert!(signed_by(&one["web-tls"]["tls.crt"], &one["ca"]["tls.crt"]));
    assert_eq!(one["web-tls"]["ca.crt"], one["ca"]["tls.crt"]);
    for name in ["ca", "web-tls", "self-tls"] {
        assert_eq!(
            secret_type(&cluster, name).await.as_deref(),
            Some("kubernetes.io/tls")
        );
    }
    assert_eq!(secret_type(&cluster, "db").await.as_deref(), Some("Opaque"));

    // Release 2 changes a ConfigMap and adds a key: every generated value is kept, the new key is made.
    let second = Session::open(v2::gen_secrets::app(), &opts)
        .await
        .expect("session");
    let plan = second.plan(vec![], false).await.expect("plan 2");
    assert_eq!(
        action(&plan, "ConfigMap", "settings").action,
        ActionKind::Update
    );
    for name in ["ca", "web-tls", "self-tls"] {
        let a = action(&plan, "Secret", name);
        assert_eq!(a.action, ActionKind::Unchanged, "{name}: {:?}", a.diff);
        assert!(
            a.generated
                .iter()
                .all(|g| g.state == "exists" && g.fingerprint.is_some()),
            "{:?}",
            a.generated
        );
    }
    let db = action(&plan, "Secret", "db");
    assert_eq!(db.action, ActionKind::Update, "the new key is a change");
    let states: BTreeMap<&str, &str> = db
        .generated
        .iter()
        .map(|g| (g.key.as_str(), g.state.as_str()))
        .collect();
    assert_eq!(
        states,
        BTreeMap::from([
            ("extra", "generate"),
            ("legacy", "exists"),
            ("password", "exists"),
            ("url", "exists")
        ])
    );
    second.apply(&plan.hash).await.expect("release 2");
    let two = live(&cluster).await;
    for (name, data) in &one {
        for (key, bytes) in data {
            assert_eq!(&two[name][key], bytes, "{name}.{key} kept across releases");
        }
    }
    assert_eq!(text(&two, "db", "extra").len(), 12);
    let again = second.plan(vec![], false).await.expect("plan 2 again");
    assert!(!again.has_changes(), "{:?}", again.actions);

    // `--rotate db.password`: that key and the template naming it, approved like any change.
    let rotating = |rotate: &[&str]| {
        let rotate: Vec<String> = rotate.iter().map(|s| s.to_string()).collect();
        second.plan_rotating(vec![], false, TakeOwnership::None, vec![], rotate)
    };
    let plan = rotating(&["db.password"]).await.expect("plan --rotate");
    assert!(plan.has_changes());
    assert_ne!(plan.hash, again.hash, "the rotation is in the hash");
    let db = action(&plan, "Secret", "db");
    assert_eq!(db.action, ActionKind::Update);
    assert_eq!(db.rotate, ["password", "url"]);
    let mut paths: Vec<&str> = db.diff.iter().map(|c| c.path.as_str()).collect();
    paths.sort();
    assert_eq!(paths, ["data.password", "data.url"]);
    for name in ["ca", "web-tls", "self-tls"] {
        assert_eq!(action(&plan, "Secret", name).action, ActionKind::Unchanged);
    }
    second.apply(&plan.hash).await.expect("rotation");
    let three = live(&cluster).await;
    let rotated = text(&three, "db", "password");
    assert_ne!(rotated, password);
    assert_eq!(rotated.len(), 24);
    assert_eq!(
        text(&three, "db", "url"),
        format!("postgres://app:{rotated}@db/app")
    );
    assert_eq!(three["db"]["legacy"], two["db"]["legacy"]);
    assert_eq!(three["db"]["extra"], two["db"]["extra"]);
    for name in ["ca", "web-tls", "self-tls"] {
        assert_eq!(three[name], two[name], "{name} untouched");
    }

    // Rotating the CA signs its certificate again; the self-signed one stays.
    let plan = rotating(&["ca"]).await.expect("plan --rotate ca");
    assert_eq!(action(&plan, "Secret", "web-tls").rotate, ["tls"]);
    second.apply(&plan.hash).await.expect("CA rotation");
    let four = live(&cluster).await;
    assert_ne!(four["ca"]["tls.crt"], three["ca"]["tls.crt"]);
    assert_ne!(four["web-tls"]["tls.crt"], three["web-tls"]["tls.crt"]);
    assert!(signed_by(
        &four["web-tls"]["tls.crt"],
        &four["ca"]["tls.crt"]
    ));
    assert!(!signed_by(
        &four["web-tls"]["tls.crt"],
        &three["ca"]["tls.crt"]
    ));
    assert_eq!(four["self-tls"], three["self-tls"]);
    assert_eq!(four["db"], three["db"]);

    // A name that is not a generated value is refused, with what there is.
    let e = rotating(&["db.pasword"]).await.expect_err("unknown key");
    assert_eq!(e.code().as_str(), "PCL0230");
    assert!(e.to_string().contains("did you mean `db.password`"), "{e}");
    let e = rotating(&["dv"]).await.expect_err("unknown secret");
    assert!(e.to_string().contains("did you mean `db`"), "{e}");

    // `status`: each generated certificate's days left.
    let report = piceli::runtime::status::status(&second).await;
    let days: BTreeMap<String, i64> = report
        .certificates
        .iter()
        .map(|c| (format!("{}/{}", c.secret, c.key), c.days_left))
        .collect();
    assert_eq!(days.len(), 3, "{days:?}");
    assert!((89..=90).contains(&days["web-tls/tls.crt"]), "{days:?}");
    assert!((364..=365).contains(&days["self-tls/tls.crt"]), "{days:?}");
    assert!(
        report
            .to_text()
            .contains("certificate web-tls/tls.crt expires")
    );

    // Nothing in clear in the state directory: no value, in bytes or base64, in any file.
    let mut values: Vec<Vec<u8>> = Vec::new();
    for snapshot in [&one, &two, &three, &four] {
        for data in snapshot.values() {
            for bytes in data.values() {
                values.push(bytes.clone());
                values.push(STANDARD.encode(bytes).into_bytes());
            }
        }
    }
    let stored = files(state.path());
    assert!(!stored.is_empty());
    for (path, bytes) in &stored {
        for v in &values {
            assert!(
                !contains(bytes, v),
                "{} holds a secret value in clear",
                path.display()
            );
        }
    }
}
