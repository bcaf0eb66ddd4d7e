//! Issuing one certificate as cert-manager's selfSigned and CA issuers do: a fresh key pair
//! (ECDSA P-256 unless the Certificate asks for P-384 or Ed25519; RSA, which ring cannot generate,
//! is issued as P-256), the Certificate's subject, SANs, usages and duration, signed by its own key
//! or by the CA Secret's key.

use std::time::{Duration, SystemTime};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType, SerialNumber,
};
use serde_json::Value;

/// cert-manager's default certificate lifetime (90 days).
pub const DEFAULT_DURATION: i64 = 2160 * 3600;

/// What signs a certificate.
pub enum Signer<'a> {
    /// The certificate's own key (`selfSigned: {}`).
    SelfSigned,
    /// A CA's certificate and key (`ca: {secretName}`), and the `ca.crt` to publish.
    Ca {
        cert_pem: &'a str,
        key_pem: &'a str,
        ca_pem: &'a str,
    },
}

/// An issued certificate: PEMs for the Secret and its validity in Unix seconds.
pub struct Issued {
    pub cert_pem: String,
    pub key_pem: String,
    pub ca_pem: String,
    pub not_before: i64,
    pub not_after: i64,
}

/// A Go duration (`2160h`, `1h30m`, `3599s`, `720h0m0s`, `90m`) in seconds.
pub fn go_duration(text: &str) -> Option<i64> {
    let mut total = 0f64;
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let n: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            _ => return None,
        };
        total += n * scale;
        rest = &rest[unit..];
    }
    Some(total as i64)
}

fn strings<'a>(spec: &'a Value, key: &str) -> impl Iterator<Item = &'a str> {
    spec.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

fn key_pair(spec: &Value) -> Result<KeyPair, String> {
    let alg = spec
        .pointer("/privateKey/algorithm")
        .and_then(Value::as_str)
        .unwrap_or("RSA");
    let size = spec
        .pointer("/privateKey/size")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let sig = match (alg, size) {
        ("ECDSA", 384) => &rcgen::PKCS_ECDSA_P384_SHA384,
        ("Ed25519", _) => &rcgen::PKCS_ED25519,
        _ => &rcgen::PKCS_ECDSA_P256_SHA256,
    };
    KeyPair::generate_for(sig).map_err(|e| format!("generating a private key: {e}"))
}

/// Issues the certificate `spec` (a cert-manager `Certificate.spec`) describes, signed by `signer`.
pub fn issue(spec: &Value, signer: &Signer<'_>) -> Result<Issued, String> {
    let dns: Vec<String> = strings(spec, "dnsNames").map(str::to_string).collect();
    let mut params = CertificateParams::new(dns).map_err(|e| format!("dnsNames: {e}"))?;
    for ip in strings(spec, "ipAddresses") {
        let addr = ip
            .parse()
            .map_err(|_| format!("ipAddresses: {ip:?} is not an IP address"))?;
        params.subject_alt_names.push(SanType::IpAddress(addr));
    }
    if let Some(cn) = spec.get("commonName").and_then(Value::as_str) {
        params.distinguished_name.push(DnType::CommonName, cn);
    }
    let orgs = spec
        .pointer("/subject/organizations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str);
    for org in orgs {
        params
            .distinguished_name
            .push(DnType::OrganizationName, org);
    }
    let is_ca = spec.get("isCA").and_then(Value::as_bool) == Some(true);
    let usages: Vec<&str> = strings(spec, "usages").collect();
    let usages = if usages.is_empty() {
        vec!["digital signature", "key encipherment"]
    } else {
        usages
    };
    for u in &usages {
        match *u {
            "digital signature" => params.key_usages.push(KeyUsagePurpose::DigitalSignature),
            "key encipherment" => params.key_usages.push(KeyUsagePurpose::KeyEncipherment),
            "cert sign" => params.key_usages.push(KeyUsagePurpose::KeyCertSign),
            "server auth" => params
                .extended_key_usages
                .push(ExtendedKeyUsagePurpose::ServerAuth),
            "client auth" => params
                .extended_key_usages
                .push(ExtendedKeyUsagePurpose::ClientAuth),
            _ => {}
        }
    }
    if is_ca {
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        for k in [KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign] {
            if !params.key_usages.contains(&k) {
                params.key_usages.push(k);
            }
        }
    }
    let lifetime = spec
        .get("duration")
        .and_then(Value::as_str)
        .and_then(go_duration)
        .filter(|d| *d > 0)
        .unwrap_or(DEFAULT_DURATION);
    let now = SystemTime::now();
    let not_before = crate::time::now_secs();
    params.not_before = now.into();
    params.not_after = (now + Duration::from_secs(lifetime as u64)).into();
    let serial: [u8; 16] = crate::registry::object::random::bytes();
    params.serial_number = Some(SerialNumber::from_slice(&serial[..]));
    let key = key_pair(spec)?;
    let (cert, ca_pem) = match signer {
        Signer::SelfSigned => {
            let cert = params
                .self_signed(&key)
                .map_err(|e| format!("self-signing: {e}"))?;
            let pem = cert.pem();
            (pem.clone(), pem)
        }
        Signer::Ca {
            cert_pem,
            key_pem,
            ca_pem,
        } => {
            let ca_key =
                KeyPair::from_pem(key_pem).map_err(|e| format!("the CA Secret's tls.key: {e}"))?;
            let issuer = Issuer::from_ca_cert_pem(cert_pem, ca_key)
                .map_err(|e| format!("the CA Secret's tls.crt: {e}"))?;
            let cert = params
                .signed_by(&key, &issuer)
                .map_err(|e| format!("signing with the CA: {e}"))?;
            (cert.pem(), (*ca_pem).to_string())
        }
    };
    Ok(Issued {
        cert_pem: cert,
        key_pem: key.serialize_pem(),
        ca_pem,
        not_before,
        not_after: not_before + lifetime,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        assert_eq!(go_duration("2160h"), Some(2160 * 3600));
        assert_eq!(go_duration("1h30m"), Some(5400));
        assert_eq!(go_duration("720h0m0s"), Some(720 * 3600));
        assert_eq!(go_duration("3599s"), Some(3599));
        assert_eq!(go_duration("1d"), None);
        assert_eq!(go_duration(""), None);
    }
}
