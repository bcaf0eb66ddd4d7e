//! The generators of secret values: random text, certificates (self-signed or signed by a CA of the app,
//! with `rcgen`), and templates filled with other keys' values. Each returns the data keys it fills and
//! their bytes; the caller keeps them in memory only (they are sent to the cluster, never stored).

use piceli_core::model::{TemplatePart, parse_template};
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};
use std::collections::BTreeMap;

/// The characters of random values: letters and digits (no symbol a URL, shell or YAML would mangle).
pub const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// `len` characters of [`ALPHABET`], each uniformly chosen (bytes that would bias the choice are drawn again).
pub fn random_text(len: usize) -> Result<String, String> {
    // 248 = 4 × 62: a byte below it maps onto the alphabet evenly.
    let limit = (256 / ALPHABET.len() * ALPHABET.len()) as u8;
    let mut out = String::with_capacity(len);
    let mut bytes = vec![0u8; len.max(16)];
    while out.len() < len {
        getrandom::fill(&mut bytes).map_err(|e| format!("no randomness: {e}"))?;
        for b in &bytes {
            if *b < limit && out.len() < len {
                out.push(ALPHABET[(*b as usize) % ALPHABET.len()] as char);
            }
        }
    }
    Ok(out)
}

/// A certificate and its private key, PEM.
pub struct Pem {
    /// The certificate.
    pub cert: String,
    /// The private key (PKCS#8).
    pub key: String,
}

/// The parameters of a certificate for `hosts` (the first is the common name) valid `days` from now.
fn params(hosts: &[String], days: i64, is_ca: bool) -> Result<CertificateParams, String> {
    let mut p =
        CertificateParams::new(hosts.to_vec()).map_err(|e| format!("hosts {hosts:?}: {e}"))?;
    let now = time::OffsetDateTime::now_utc();
    p.not_before = now - time::Duration::minutes(5);
    p.not_after = now + time::Duration::days(days);
    let mut dn = DistinguishedName::new();
    dn.push(
        DnType::CommonName,
        hosts.first().cloned().unwrap_or_default(),
    );
    p.distinguished_name = dn;
    if is_ca {
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
    } else {
        p.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        p.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        p.use_authority_key_identifier_extension = true;
    }
    Ok(p)
}

/// A self-signed certificate (a CA when `is_ca`) with a new ECDSA P-256 key.
pub fn tls_self_signed(hosts: &[String], days: i64, is_ca: bool) -> Result<Pem, String> {
    let key = KeyPair::generate().map_err(|e| format!("no key: {e}"))?;
    let cert = params(hosts, days, is_ca)?
        .self_signed(&key)
        .map_err(|e| format!("cannot sign: {e}"))?;
    Ok(Pem {
        cert: cert.pem(),
        key: key.serialize_pem(),
    })
}

/// A certificate signed by the CA `ca` (its certificate and key, PEM), with a new ECDSA P-256 key.
pub fn tls_signed_by(hosts: &[String], days: i64, ca: &Pem) -> Result<Pem, String> {
    let ca_key =
        KeyPair::from_pem(&ca.key).map_err(|e| format!("the CA's key does not parse: {e}"))?;
    let issuer = Issuer::from_ca_cert_pem(&ca.cert, ca_key)
        .map_err(|e| format!("the CA's certificate does not parse: {e}"))?;
    let key = KeyPair::generate().map_err(|e| format!("no key: {e}"))?;
    let cert = params(hosts, days, false)?
        .signed_by(&key, &issuer)
        .map_err(|e| format!("cannot sign: {e}"))?;
    Ok(Pem {
        cert: cert.pem(),
        key: key.serialize_pem(),
    })
}

/// What a template gives: its text with each `{key}` replaced, or that a key it names has no value yet.
#[derive(Debug, PartialEq, Eq)]
pub enum Filled {
    /// The value.
    Text(String),
    /// A key it names is still to be generated (planning).
    Pending,
}

/// Fill `template` from `values` (data key → value; `None`: still to be generated). `Err` names a key that
/// is missing or not text.
pub fn fill_template(
    template: &str,
    values: &BTreeMap<String, Option<Vec<u8>>>,
) -> Result<Filled, String> {
    let mut out = String::new();
    for part in parse_template(template)? {
        match part {
            TemplatePart::Text(t) => out.push_str(&t),
            TemplatePart::Key(k) => match values.get(&k) {
                Some(Some(bytes)) => out.push_str(
                    std::str::from_utf8(bytes)
                        .map_err(|_| format!("the value of `{k}` is not UTF-8 text"))?,
                ),
                Some(None) => return Ok(Filled::Pending),
                None => return Err(format!("it names `{k}`, which has no value")),
            },
        }
    }
    Ok(Filled::Text(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use x509_parser::prelude::*;

    #[test]
    fn random_text_has_the_length_and_alphabet() {
        let a = random_text(64).unwrap();
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|b| ALPHABET.contains(&b)));
        assert_ne!(a, random_text(64).unwrap());
    }

    fn parse(pem: &str) -> (Vec<String>, i64, bool, String) {
        let (_, p) = x509_parser::pem::parse_x509_pem(pem.as_bytes()).unwrap();
        let cert = p.parse_x509().unwrap();
        let sans = cert
            .subject_alternative_name()
            .unwrap()
            .map(|s| {
                s.value
                    .general_names
                    .iter()
                    .map(|n| match n {
                        GeneralName::DNSName(d) => d.to_string(),
                        GeneralName::IPAddress(ip) => format!("{ip:?}"),
                        other => format!("{other:?}"),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let v = cert.validity();
        let days = (v.not_after.timestamp() - v.not_before.timestamp()) / 86_400;
        (sans, days, cert.is_ca(), cert.issuer().to_string())
    }

    #[test]
    fn self_signed_certificates_name_their_hosts_and_last_their_days() {
        let pem = tls_self_signed(&["db".into(), "db.shop.svc".into()], 30, false).unwrap();
        let (sans, days, ca, issuer) = parse(&pem.cert);
        assert_eq!(sans, ["db", "db.shop.svc"]);
        assert_eq!(days, 30);
        assert!(!ca);
        assert_eq!(issuer, "CN=db");
        assert!(pem.key.contains("PRIVATE KEY"));
    }

    #[test]
    fn signed_certificates_chain_to_their_ca() {
        let ca = tls_self_signed(&["shop CA".into()], 3650, true).unwrap();
        assert!(parse(&ca.cert).2);
        let leaf = tls_signed_by(&["api".into()], 90, &ca).unwrap();
        let (sans, days, is_ca, issuer) = parse(&leaf.cert);
        assert_eq!((sans, days, is_ca), (vec!["api".to_string()], 90, false));
        assert_eq!(issuer, "CN=shop CA");
        // The signature verifies with the CA's public key.
        let (_, ca_pem) = x509_parser::pem::parse_x509_pem(ca.cert.as_bytes()).unwrap();
        let ca_cert = ca_pem.parse_x509().unwrap();
        let (_, leaf_pem) = x509_parser::pem::parse_x509_pem(leaf.cert.as_bytes()).unwrap();
        let leaf_cert = leaf_pem.parse_x509().unwrap();
        assert!(
            leaf_cert
                .verify_signature(Some(ca_cert.public_key()))
                .is_ok()
        );
    }

    #[test]
    fn templates_fill_from_the_values_or_wait_for_them() {
        let mut values = BTreeMap::new();
        values.insert("password".to_string(), Some(b"s3cret".to_vec()));
        assert_eq!(
            fill_template("postgres://app:{password}@db/app", &values).unwrap(),
            Filled::Text("postgres://app:s3cret@db/app".into())
        );
        values.insert("password".to_string(), None);
        assert_eq!(
            fill_template("{password}", &values).unwrap(),
            Filled::Pending
        );
        assert!(fill_template("{user}", &values).is_err());
    }
}
