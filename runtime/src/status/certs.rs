//! Generated certificates in `status`: for each Secret key a TLS generator fills, when its live
//! certificate expires and how many days are left (a warning under [`WARN_DAYS`]; `plan --rotate` makes it
//! again). Only the certificate's validity is read, never the key.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use piceli_core::model::App;
use serde::Serialize;
use serde_json::Value;

/// Fewer days left than this is a warning.
pub const WARN_DAYS: i64 = 30;

/// One generated certificate, as it is live.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Certificate {
    /// The Secret.
    pub secret: String,
    /// The data key (`tls.crt`).
    pub key: String,
    /// When it expires (RFC 3339, UTC).
    pub not_after: String,
    /// Whole days left (negative: expired).
    pub days_left: i64,
    /// What to do about it, when it expires within [`WARN_DAYS`] (or has).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// The Secrets and data keys of the app's generated certificates.
pub fn generated(app: &App) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for s in &app.secrets {
        for (k, src) in &s.data {
            if src.is_tls() {
                out.push((s.name.v.clone(), k.v.clone(), format!("{}.crt", k.v)));
            }
        }
    }
    out
}

/// The certificate in a live Secret's `data[key]`, read at `now` (Unix seconds); `None` when it is
/// missing or does not parse.
pub fn read(secret: &str, entry: &str, key: &str, live: &Value, now: i64) -> Option<Certificate> {
    let pem = STANDARD.decode(live["data"][key].as_str()?).ok()?;
    let (_, pem) = x509_parser::pem::parse_x509_pem(&pem).ok()?;
    let cert = pem.parse_x509().ok()?;
    let not_after = cert.validity().not_after.timestamp();
    let days_left = (not_after - now).div_euclid(86_400);
    let at = jiff::Timestamp::from_second(not_after).ok()?;
    let warning = (days_left < WARN_DAYS).then(|| {
        let when = if days_left < 0 {
            "has expired".to_string()
        } else {
            format!("expires in {days_left} days")
        };
        format!(
            "certificate {secret}/{key} {when}: `plan --rotate {secret}.{entry}` makes a new one"
        )
    });
    Some(Certificate {
        secret: secret.to_string(),
        key: key.to_string(),
        not_after: at.to_string(),
        days_left,
        warning,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn secret_with(days: i64) -> Value {
        let pem = crate::engine::generate::tls_self_signed(&["db".into()], days, false).unwrap();
        json!({"data": {"tls.crt": STANDARD.encode(pem.cert)}})
    }

    #[test]
    fn days_left_and_a_warning_near_expiry() {
        let now = jiff::Timestamp::now().as_second();
        let c = read("db", "tls", "tls.crt", &secret_with(365), now).unwrap();
        assert!((364..=365).contains(&c.days_left), "{c:?}");
        assert!(c.warning.is_none());
        let soon = read("db", "tls", "tls.crt", &secret_with(10), now).unwrap();
        assert!((9..=10).contains(&soon.days_left), "{soon:?}");
        let w = soon.warning.unwrap();
        assert!(w.contains("plan --rotate db.tls"), "{w}");
        let later = read("db", "tls", "tls.crt", &secret_with(10), now + 20 * 86_400).unwrap();
        assert!(later.days_left < 0 && later.warning.unwrap().contains("has expired"));
        assert!(read("db", "tls", "tls.crt", &json!({"data": {}}), now).is_none());
    }
}
