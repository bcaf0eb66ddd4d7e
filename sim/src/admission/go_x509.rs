//! Webhook certificate checks in the order and the words of Go's `crypto/x509` (`Certificate.Verify`),
//! which kube-apiserver quotes after `tls: failed to verify certificate: `: first the serving
//! certificate's validity period (`x509: certificate has expired or is not yet valid: current time
//! T is after U`), then the host name (`x509: certificate is valid for A, not B`), then the chain
//! (`x509: certificate signed by unknown authority`, with Go's hint when the bundle holds a certificate
//! of the issuer's name that did not sign it).

use std::net::IpAddr;

use rustls::pki_types::{ServerName, UnixTime};
use x509_parser::certificate::X509Certificate;
use x509_parser::extensions::GeneralName;

/// A verification failure worded as Go words it (starting `x509: `), carried through rustls as a
/// `CertificateError::Other`.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct GoX509(pub String);

impl GoX509 {
    /// As the error rustls reports from a verifier.
    pub fn into_rustls(self) -> rustls::Error {
        rustls::Error::InvalidCertificate(rustls::CertificateError::Other(rustls::OtherError(
            std::sync::Arc::new(self),
        )))
    }
}

/// Go's `time.RFC3339` of a Unix time in UTC (`2025-01-17T21:11:54Z`).
fn rfc3339(seconds: i64) -> String {
    jiff::Timestamp::from_second(seconds)
        .map(|t| t.to_string())
        .unwrap_or_else(|_| seconds.to_string())
}

/// Go's wording of a certificate used outside its validity period at `now`.
pub fn expired_at(now: i64, not_before: i64, not_after: i64) -> Option<String> {
    let (relation, bound) = if now < not_before {
        ("before", not_before)
    } else if now > not_after {
        ("after", not_after)
    } else {
        return None;
    };
    Some(format!(
        "x509: certificate has expired or is not yet valid: current time {} is {relation} {}",
        rfc3339(now),
        rfc3339(bound)
    ))
}

/// The leaf checks Go makes before looking for a chain: validity period, then host name.
pub fn check_leaf(
    cert: &X509Certificate<'_>,
    server_name: &ServerName<'_>,
    now: UnixTime,
) -> Result<(), GoX509> {
    let validity = cert.validity();
    if let Some(why) = expired_at(
        i64::try_from(now.as_secs()).unwrap_or(i64::MAX),
        validity.not_before.timestamp(),
        validity.not_after.timestamp(),
    ) {
        return Err(GoX509(why));
    }
    verify_hostname(cert, server_name).map_err(GoX509)
}

/// Go's `matchHostnames`: case-insensitive, a `*` allowed as the whole leftmost label.
fn match_hostnames(pattern: &str, host: &str) -> bool {
    let pattern = pattern.to_ascii_lowercase();
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if pattern.is_empty() || host.is_empty() {
        return false;
    }
    let (p, h): (Vec<&str>, Vec<&str>) = (pattern.split('.').collect(), host.split('.').collect());
    p.len() == h.len()
        && p.iter()
            .zip(&h)
            .enumerate()
            .all(|(i, (p, h))| (i == 0 && *p == "*") || p == h)
}

/// Go's `Certificate.VerifyHostname` and `HostnameError.Error()`.
fn verify_hostname(cert: &X509Certificate<'_>, server_name: &ServerName<'_>) -> Result<(), String> {
    let san = cert.subject_alternative_name().ok().flatten();
    let names: &[GeneralName<'_>] = san
        .as_ref()
        .map_or(&[][..], |s| s.value.general_names.as_slice());
    let dns: Vec<&str> = names
        .iter()
        .filter_map(|n| match n {
            GeneralName::DNSName(d) => Some(*d),
            _ => None,
        })
        .collect();
    let ips: Vec<IpAddr> = names
        .iter()
        .filter_map(|n| match n {
            GeneralName::IPAddress(b) => match b.len() {
                4 => <[u8; 4]>::try_from(*b).ok().map(IpAddr::from),
                16 => <[u8; 16]>::try_from(*b).ok().map(IpAddr::from),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let host = match server_name {
        ServerName::IpAddress(ip) => {
            let ip = IpAddr::from(*ip);
            if ips.contains(&ip) {
                return Ok(());
            }
            ip.to_string()
        }
        ServerName::DnsName(name) => {
            let host = name.as_ref();
            if dns.iter().any(|d| match_hostnames(d, host)) {
                return Ok(());
            }
            host.to_string()
        }
        _ => String::new(),
    };
    let common_name = cert
        .subject()
        .iter_common_name()
        .next()
        .and_then(|a| a.as_str().ok());
    if san.is_none() && common_name.is_some_and(|cn| match_hostnames(cn, &host)) {
        return Err(
            "x509: certificate relies on legacy Common Name field, use SANs instead".into(),
        );
    }
    let valid = if host.parse::<IpAddr>().is_ok() {
        if ips.is_empty() {
            return Err(format!(
                "x509: cannot validate certificate for {host} because it doesn't contain any IP SANs"
            ));
        }
        ips.iter()
            .map(IpAddr::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    } else {
        dns.join(", ")
    };
    if valid.is_empty() {
        return Err(format!(
            "x509: certificate is not valid for any names, but wanted to match {host}"
        ));
    }
    Err(format!(
        "x509: certificate is valid for {valid}, not {host}"
    ))
}

/// Go's public key algorithm of a certificate: its `PublicKeyAlgorithm.String()` and `%T`.
fn key_kind(cert: &X509Certificate<'_>) -> Option<(&'static str, &'static str)> {
    match cert
        .public_key()
        .algorithm
        .algorithm
        .to_id_string()
        .as_str()
    {
        "1.2.840.10045.2.1" => Some(("ECDSA", "*ecdsa.PublicKey")),
        "1.2.840.113549.1.1.1" | "1.2.840.113549.1.1.10" => Some(("RSA", "*rsa.PublicKey")),
        "1.3.101.112" => Some(("Ed25519", "ed25519.PublicKey")),
        _ => None,
    }
}

/// The public key algorithm a signature algorithm needs, as Go names it.
fn signed_with(cert: &X509Certificate<'_>) -> Option<&'static str> {
    let oid = cert.signature_algorithm.algorithm.to_id_string();
    if oid.starts_with("1.2.840.10045.4.") {
        Some("ECDSA")
    } else if oid.starts_with("1.2.840.113549.1.1.") {
        Some("RSA")
    } else if oid == "1.3.101.112" {
        Some("Ed25519")
    } else {
        None
    }
}

/// Why `parent` did not sign `child`, as Go's `CheckSignatureFrom` says it when the signature does
/// not verify.
fn signature_error(child: &X509Certificate<'_>, parent: &X509Certificate<'_>) -> String {
    let basic = parent.basic_constraints().ok().flatten();
    let v3 = parent.version() == x509_parser::x509::X509Version::V3;
    let key_usage = parent.key_usage().ok().flatten();
    if (v3 && basic.is_none())
        || basic.is_some_and(|b| !b.value.ca)
        || key_usage.is_some_and(|k| !k.value.key_cert_sign())
    {
        return "x509: invalid signature: parent certificate cannot sign this kind of certificate"
            .into();
    }
    match (signed_with(child), key_kind(parent)) {
        (Some(wanted), Some((have, go_type))) if wanted != have => format!(
            "x509: signature algorithm specifies an {wanted} public key, but have public key of type {go_type}"
        ),
        (_, Some(("RSA", _))) => "crypto/rsa: verification error".into(),
        (_, Some(("Ed25519", _))) => "x509: Ed25519 verification failure".into(),
        (_, Some(_)) => "x509: ECDSA verification failure".into(),
        (_, None) => "x509: cannot verify signature: algorithm unimplemented".into(),
    }
}

/// Go's `UnknownAuthorityError`: with the hint of the first bundle certificate named as the leaf's
/// issuer (which therefore did not sign it).
pub fn unknown_authority(leaf: &X509Certificate<'_>, bundle: &[X509Certificate<'_>]) -> GoX509 {
    let mut message = "x509: certificate signed by unknown authority".to_string();
    let issuer = leaf.issuer().as_raw();
    if let Some(candidate) = bundle.iter().find(|c| c.subject().as_raw() == issuer) {
        let subject = candidate.subject();
        let name = subject
            .iter_common_name()
            .next()
            .and_then(|a| a.as_str().ok())
            .filter(|n| !n.is_empty())
            .or_else(|| {
                subject
                    .iter_organization()
                    .next()
                    .and_then(|a| a.as_str().ok())
            })
            .map(str::to_string)
            .unwrap_or_else(|| format!("serial:{}", candidate.tbs_certificate.serial));
        message.push_str(&format!(
            " (possibly because of {:?} while trying to verify candidate authority certificate {name:?})",
            signature_error(leaf, candidate)
        ));
    }
    GoX509(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validity_is_worded_with_go_rfc3339_times() {
        assert_eq!(
            expired_at(1_737_148_314, 1_700_000_000, 1_737_051_623).as_deref(),
            Some(
                "x509: certificate has expired or is not yet valid: current time 2025-01-17T21:11:54Z is after 2025-01-16T18:20:23Z"
            )
        );
        assert!(expired_at(10, 20, 30).is_some_and(|m| {
            m.ends_with("current time 1970-01-01T00:00:10Z is before 1970-01-01T00:00:20Z")
        }));
        assert_eq!(
            expired_at(30, 20, 30),
            None,
            "the last second is still valid"
        );
    }

    #[test]
    fn host_names_match_as_go_matches_them() {
        assert!(match_hostnames("hook.webhooks.svc", "HOOK.webhooks.svc."));
        assert!(match_hostnames("*.webhooks.svc", "hook.webhooks.svc"));
        assert!(!match_hostnames("*.svc", "hook.webhooks.svc"));
        assert!(!match_hostnames("h*.webhooks.svc", "hook.webhooks.svc"));
    }
}
