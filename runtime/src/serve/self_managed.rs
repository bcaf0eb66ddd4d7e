//! `tls: self_managed`: the operator is its own certificate authority. The leader (a Lease of its own)
//! keeps a Secret with a CA and a serving certificate for the operator's Service, signed by it, renews
//! the certificate before it expires, and writes the CA into the `caBundle` of the operator's webhook
//! configurations; every replica serves the Secret's pair and reloads it when it changes
//! ([`super::SecretTls`]). No cert-manager is needed.

use std::net::IpAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::Secret;
use kube::Client;
use kube::api::{Api, ObjectMeta, PostParams};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};

use crate::controller::LeaderElection;
use crate::controller::leader::Elector;

/// The Secret's annotation with the serving certificate's expiry (Unix seconds).
pub const NOT_AFTER: &str = "piceli.dev/not-after";
/// The Secret's annotation with the CA's expiry (Unix seconds).
pub const CA_NOT_AFTER: &str = "piceli.dev/ca-not-after";

/// What the operator keeps for itself, and for how long.
#[derive(Debug, Clone, PartialEq)]
pub struct SelfManaged {
    /// The operator's namespace (the Secret's, the Lease's).
    pub namespace: String,
    /// The Secret: tls.crt, tls.key (the serving pair), ca.crt (the bundle clients trust), ca.key.
    pub secret: String,
    /// The serving certificate's DNS names: the Service's `NAME.NAMESPACE.svc` and `….svc.cluster.local`.
    pub dns_names: Vec<String>,
    /// IP addresses in the certificate too (none in a cluster; loopback for a webhook called by `url:`).
    pub ip_addresses: Vec<IpAddr>,
    /// The webhook configurations whose every webhook gets the CA as `caBundle` (both kinds of this name;
    /// one that does not exist is skipped).
    pub configurations: Vec<String>,
    /// How long a serving certificate is valid (90 days).
    pub lifetime: Duration,
    /// How long the CA is valid (10 years).
    pub ca_lifetime: Duration,
    /// A certificate (or the CA) this close to its expiry is renewed (30 days).
    pub renew_before: Duration,
}

impl SelfManaged {
    /// For the operator `name` in `namespace`: its Secret `NAME-tls`, its Service's names and its
    /// configurations `NAME.NAMESPACE`.
    pub fn for_operator(name: &str, namespace: &str) -> SelfManaged {
        const DAY: u64 = 24 * 3600;
        SelfManaged {
            namespace: namespace.to_string(),
            secret: format!("{name}-tls"),
            dns_names: vec![
                format!("{name}.{namespace}.svc"),
                format!("{name}.{namespace}.svc.cluster.local"),
            ],
            ip_addresses: Vec::new(),
            configurations: vec![format!("{name}.{namespace}")],
            lifetime: Duration::from_secs(90 * DAY),
            ca_lifetime: Duration::from_secs(3650 * DAY),
            renew_before: Duration::from_secs(30 * DAY),
        }
    }
}

/// What one [`ensure`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The Secret was made: a new CA and serving certificate.
    Created,
    /// The serving certificate was renewed (and the CA with it when it was due too).
    Renewed,
    /// Both were valid for longer than `renew_before`.
    Current,
}

/// Why the certificate could not be kept.
#[derive(Debug, thiserror::Error)]
pub enum SelfManagedError {
    /// A read or write of the Secret or a configuration failed.
    #[error("{what}: {source}")]
    Api {
        /// What was being done.
        what: String,
        /// The API's error.
        source: kube::Error,
    },
    /// The certificates could not be made.
    #[error("issuing the certificate: {0}")]
    Issue(String),
}

fn api_error(what: impl Into<String>) -> impl FnOnce(kube::Error) -> SelfManagedError {
    let what = what.into();
    move |source| SelfManagedError::Api { what, source }
}

fn unix(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// A CA: its certificate and key (PEM).
struct Ca {
    cert: String,
    key: String,
    not_after: i64,
}

fn new_ca(spec: &SelfManaged, now: SystemTime) -> Result<Ca, SelfManagedError> {
    let issue = |e: rcgen::Error| SelfManagedError::Issue(e.to_string());
    let key = KeyPair::generate().map_err(issue)?;
    let mut params = CertificateParams::new(Vec::<String>::new()).map_err(issue)?;
    params
        .distinguished_name
        .push(DnType::CommonName, format!("{} CA", spec.secret));
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    params.not_before = now.into();
    params.not_after = (now + spec.ca_lifetime).into();
    let cert = params.self_signed(&key).map_err(issue)?;
    Ok(Ca {
        cert: cert.pem(),
        key: key.serialize_pem(),
        not_after: unix(now + spec.ca_lifetime),
    })
}

/// A serving certificate for the Service's names, signed by `ca`: (cert, key, not after).
fn serving(
    spec: &SelfManaged,
    ca: &Ca,
    now: SystemTime,
) -> Result<(String, String, i64), SelfManagedError> {
    let issue = |e: rcgen::Error| SelfManagedError::Issue(e.to_string());
    let ca_key = KeyPair::from_pem(&ca.key).map_err(issue)?;
    let issuer = Issuer::from_ca_cert_pem(&ca.cert, ca_key).map_err(issue)?;
    let mut params = CertificateParams::new(spec.dns_names.clone()).map_err(issue)?;
    if let Some(first) = spec.dns_names.first() {
        params.distinguished_name.push(DnType::CommonName, first);
    }
    for ip in &spec.ip_addresses {
        params.subject_alt_names.push(SanType::IpAddress(*ip));
    }
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.not_before = now.into();
    // Never past the CA.
    let not_after =
        (now + spec.lifetime).min(UNIX_EPOCH + Duration::from_secs(ca.not_after.max(0) as u64));
    params.not_after = not_after.into();
    let key = KeyPair::generate().map_err(issue)?;
    let cert = params.signed_by(&key, &issuer).map_err(issue)?;
    Ok((cert.pem(), key.serialize_pem(), unix(not_after)))
}

/// What the Secret holds now, as far as renewal is concerned.
struct Held {
    ca: Option<Ca>,
    /// ca.crt: the bundle (the current CA, and during a CA rotation the previous one too).
    bundle: String,
    not_after: i64,
}

fn held(secret: &Secret) -> Held {
    let data = secret.data.clone().unwrap_or_default();
    let text = |k: &str| {
        data.get(k)
            .and_then(|b| String::from_utf8(b.0.clone()).ok())
            .unwrap_or_default()
    };
    let annotation = |k: &str| {
        secret
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(k))
            .and_then(|v| v.parse::<i64>().ok())
            .unwrap_or(0)
    };
    let (cert, key) = (text("ca-current.crt"), text("ca.key"));
    let ca = (!cert.is_empty() && !key.is_empty()).then(|| Ca {
        cert,
        key,
        not_after: annotation(CA_NOT_AFTER),
    });
    let complete = ["tls.crt", "tls.key", "ca.crt"]
        .iter()
        .all(|k| !text(k).is_empty());
    Held {
        ca,
        bundle: text("ca.crt"),
        not_after: if complete { annotation(NOT_AFTER) } else { 0 },
    }
}

/// The Secret as `spec` wants it at `now`, from what it holds (`None`: nothing yet): the new Secret
/// and what changed, or `None` when it is current.
fn renewed(
    spec: &SelfManaged,
    existing: Option<&Secret>,
    now: SystemTime,
) -> Result<Option<(Secret, Outcome)>, SelfManagedError> {
    let due = unix(now + spec.renew_before);
    let held = existing.map(held);
    let outcome = match &held {
        None => Outcome::Created,
        Some(h) if h.ca.as_ref().is_none_or(|ca| ca.not_after <= due) || h.not_after <= due => {
            Outcome::Renewed
        }
        Some(_) => return Ok(None),
    };
    // The CA is kept unless it is due itself; a new CA is trusted beside the old one until the old one's
    // certificates are gone (the bundle holds both).
    let (ca, bundle) = match held.as_ref().and_then(|h| h.ca.as_ref().map(|ca| (h, ca))) {
        Some((h, ca)) if ca.not_after > due => (
            Ca {
                cert: ca.cert.clone(),
                key: ca.key.clone(),
                not_after: ca.not_after,
            },
            h.bundle.clone(),
        ),
        previous => {
            let ca = new_ca(spec, now)?;
            let bundle = match previous {
                Some((_, old)) if old.not_after > unix(now) => format!("{}{}", ca.cert, old.cert),
                _ => ca.cert.clone(),
            };
            (ca, bundle)
        }
    };
    let (cert, key, not_after) = serving(spec, &ca, now)?;
    let bytes = |s: &str| ByteString(s.as_bytes().to_vec());
    let mut metadata = existing.map(|s| s.metadata.clone()).unwrap_or(ObjectMeta {
        name: Some(spec.secret.clone()),
        namespace: Some(spec.namespace.clone()),
        ..ObjectMeta::default()
    });
    let annotations = metadata.annotations.get_or_insert_with(Default::default);
    annotations.insert(NOT_AFTER.into(), not_after.to_string());
    annotations.insert(CA_NOT_AFTER.into(), ca.not_after.to_string());
    metadata.managed_fields = None;
    let secret = Secret {
        metadata,
        type_: Some("kubernetes.io/tls".into()),
        data: Some(
            [
                ("tls.crt", bytes(&cert)),
                ("tls.key", bytes(&key)),
                ("ca.crt", bytes(&bundle)),
                ("ca-current.crt", bytes(&ca.cert)),
                ("ca.key", bytes(&ca.key)),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        ),
        ..Secret::default()
    };
    Ok(Some((secret, outcome)))
}

/// One turn of the leader: the Secret made or renewed when due, then the CA bundle in every webhook of
/// the configurations. Safe to run from two processes at once (writes carry the read resourceVersion; the
/// loser reads the winner's Secret next time).
pub async fn ensure(
    client: &Client,
    spec: &SelfManaged,
    now: SystemTime,
) -> Result<Outcome, SelfManagedError> {
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &spec.namespace);
    let shown = format!("Secret {}/{}", spec.namespace, spec.secret);
    let existing = secrets
        .get_opt(&spec.secret)
        .await
        .map_err(api_error(format!("reading {shown}")))?;
    let (secret, outcome) = match renewed(spec, existing.as_ref(), now)? {
        None => (existing.unwrap_or_default(), Outcome::Current),
        Some((secret, outcome)) => {
            let written = if existing.is_some() {
                secrets
                    .replace(&spec.secret, &PostParams::default(), &secret)
                    .await
            } else {
                secrets.create(&PostParams::default(), &secret).await
            };
            let written = written.map_err(api_error(format!("writing {shown}")))?;
            tracing::info!(secret = %shown, outcome = ?outcome, "the serving certificate was issued");
            (written, outcome)
        }
    };
    let bundle = held(&secret).bundle;
    inject(client, spec, bundle.as_bytes()).await?;
    Ok(outcome)
}

/// `bundle` as the `caBundle` of every webhook of the configurations (written only where it differs).
async fn inject(
    client: &Client,
    spec: &SelfManaged,
    bundle: &[u8],
) -> Result<(), SelfManagedError> {
    let want = ByteString(bundle.to_vec());
    for name in &spec.configurations {
        let validating: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
        if let Some(mut c) = validating.get_opt(name).await.map_err(api_error(format!(
            "reading ValidatingWebhookConfiguration {name}"
        )))? {
            let hooks = c.webhooks.iter_mut().flatten();
            let mut changed = false;
            for h in hooks {
                changed |= h.client_config.ca_bundle.as_ref() != Some(&want);
                h.client_config.ca_bundle = Some(want.clone());
            }
            if changed {
                validating
                    .replace(name, &PostParams::default(), &c)
                    .await
                    .map_err(api_error(format!(
                        "writing ValidatingWebhookConfiguration {name}"
                    )))?;
            }
        }
        let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
        if let Some(mut c) = mutating.get_opt(name).await.map_err(api_error(format!(
            "reading MutatingWebhookConfiguration {name}"
        )))? {
            let mut changed = false;
            for h in c.webhooks.iter_mut().flatten() {
                changed |= h.client_config.ca_bundle.as_ref() != Some(&want);
                h.client_config.ca_bundle = Some(want.clone());
            }
            if changed {
                mutating
                    .replace(name, &PostParams::default(), &c)
                    .await
                    .map_err(api_error(format!(
                        "writing MutatingWebhookConfiguration {name}"
                    )))?;
            }
        }
    }
    Ok(())
}

/// The leader's loop until `stop`: every `check_every`, the holder of the Lease `SECRET` runs [`ensure`]
/// (failures are logged and tried again next time).
pub async fn maintain(
    client: Client,
    spec: SelfManaged,
    identity: String,
    check_every: Duration,
    stop: impl std::future::Future<Output = ()>,
) {
    let election = LeaderElection::new(spec.secret.clone());
    let mut elector = Elector::new(client.clone(), &spec.namespace, election, &identity);
    let mut stop = std::pin::pin!(stop);
    loop {
        match elector.try_acquire_or_renew().await {
            Ok(true) => {
                if let Err(e) = ensure(&client, &spec, SystemTime::now()).await {
                    tracing::warn!(
                        code = %piceli_core::codes::Code::TlsSecretFailed,
                        error = %crate::logging::words(&e),
                        "keeping the self-managed serving certificate failed; trying again"
                    );
                }
            }
            Ok(false) => {}
            Err(e) => tracing::warn!(
                code = %piceli_core::codes::Code::LeaderElectionFailed,
                error = %crate::logging::words(&e),
                "leader election for the serving certificate failed"
            ),
        }
        tokio::select! {
            _ = &mut stop => break,
            _ = tokio::time::sleep(check_every) => {}
        }
    }
    let _ = elector.release().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> SelfManaged {
        SelfManaged::for_operator("guard", "guard-system")
    }

    #[test]
    fn a_missing_secret_is_made_and_a_current_one_is_kept() {
        let now = SystemTime::now();
        let (secret, outcome) = renewed(&spec(), None, now).expect("issues").expect("made");
        assert_eq!(outcome, Outcome::Created);
        let data = secret.data.clone().expect("data");
        for key in ["tls.crt", "tls.key", "ca.crt", "ca-current.crt", "ca.key"] {
            assert!(data.contains_key(key), "{key}");
        }
        assert_eq!(secret.type_.as_deref(), Some("kubernetes.io/tls"));
        let h = held(&secret);
        let day = 24 * 3600;
        assert_eq!(h.not_after, unix(now) + 90 * day);
        assert_eq!(
            h.ca.as_ref().map(|c| c.not_after),
            Some(unix(now) + 3650 * day)
        );
        assert!(
            renewed(&spec(), Some(&secret), now)
                .expect("reads")
                .is_none()
        );
        // 61 days later, 29 are left: renewed, with the same CA and bundle.
        let later = now + Duration::from_secs(61 * day as u64);
        let (renewed_secret, outcome) = renewed(&spec(), Some(&secret), later)
            .expect("issues")
            .expect("renewed");
        assert_eq!(outcome, Outcome::Renewed);
        let again = held(&renewed_secret);
        assert_eq!(again.bundle, h.bundle, "the CA is kept");
        assert_eq!(again.not_after, unix(later) + 90 * day);
        assert_ne!(
            renewed_secret.data.as_ref().map(|d| d["tls.crt"].clone()),
            data.get("tls.crt").cloned()
        );
    }

    #[test]
    fn a_ca_due_for_renewal_is_replaced_and_trusted_beside_the_old_one() {
        let now = SystemTime::now();
        let s = SelfManaged {
            ca_lifetime: Duration::from_secs(40 * 24 * 3600),
            ..spec()
        };
        let (secret, _) = renewed(&s, None, now).expect("issues").expect("made");
        let first = held(&secret);
        // The serving certificate stops with the CA, 40 days out; 15 days later both are due.
        assert_eq!(
            first.not_after,
            first.ca.as_ref().map(|c| c.not_after).unwrap_or(0)
        );
        let day = Duration::from_secs(24 * 3600);
        assert!(
            renewed(&s, Some(&secret), now + day)
                .expect("reads")
                .is_none()
        );
        let (next, outcome) = renewed(&s, Some(&secret), now + 15 * day)
            .expect("issues")
            .expect("renewed");
        assert_eq!(outcome, Outcome::Renewed);
        let bundle = held(&next).bundle;
        assert_eq!(bundle.matches("BEGIN CERTIFICATE").count(), 2, "{bundle}");
        assert!(bundle.ends_with(&first.bundle), "the old CA stays trusted");
    }

    #[test]
    fn an_incomplete_secret_is_renewed() {
        let now = SystemTime::now();
        let (mut secret, _) = renewed(&spec(), None, now).expect("issues").expect("made");
        if let Some(d) = secret.data.as_mut() {
            d.remove("tls.key");
        }
        let (_, outcome) = renewed(&spec(), Some(&secret), now)
            .expect("issues")
            .expect("renewed");
        assert_eq!(outcome, Outcome::Renewed);
    }
}
