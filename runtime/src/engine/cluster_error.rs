//! Cluster failures in words: a `kube::Error` (or any error carrying one) classified as a TLS failure, a
//! refused connection, rejected credentials or another answer, described by the server's own words and the
//! causes below it — never a `Debug` dump of a struct.

use super::error::{Cause, EngineError};
use std::error::Error as StdError;

/// What kind of failure a cluster call met (ordered: a more telling kind wins over a vaguer one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Failure {
    /// Anything else (another HTTP answer, a timeout, a malformed response).
    Other,
    /// Nothing accepted the connection (refused, unreachable host or network).
    Unreachable,
    /// The server answered 401: the credentials were rejected.
    Unauthorized,
    /// The TLS handshake failed: the server's certificate was not accepted.
    Tls,
}

/// What an I/O error (and the I/O errors it wraps: connectors wrap the TLS stream's error again) says.
fn io_failure(mut io: &std::io::Error) -> Failure {
    use std::io::ErrorKind::{
        ConnectionRefused, HostUnreachable, NetworkUnreachable, NotConnected,
    };
    let mut kind = Failure::Other;
    loop {
        if matches!(
            io.kind(),
            ConnectionRefused | HostUnreachable | NetworkUnreachable | NotConnected
        ) {
            kind = kind.max(Failure::Unreachable);
        }
        match io.get_ref() {
            Some(inner) if inner.is::<rustls::Error>() => return Failure::Tls,
            Some(inner) => match inner.downcast_ref::<std::io::Error>() {
                Some(wrapped) => io = wrapped,
                None => return kind,
            },
            None => return kind,
        }
    }
}

/// The failure's kind and a one-line description of it.
pub fn classify(e: &(dyn StdError + 'static)) -> (Failure, String) {
    let mut kind = Failure::Other;
    let mut parts: Vec<String> = Vec::new();
    let mut next: Option<&(dyn StdError + 'static)> = Some(e);
    while let Some(err) = next {
        next = err.source();
        let text = if let Some(kube::Error::Api(status)) = err.downcast_ref::<kube::Error>() {
            // The status is the server's whole answer: nothing below it to add.
            next = None;
            if status.code == 401 {
                kind = Failure::Unauthorized;
            }
            let mut words = status.message.clone();
            if !status.reason.is_empty() && status.reason != status.message {
                words = format!("{words} (reason {})", status.reason);
            }
            let words = if words.is_empty() {
                "no message".into()
            } else {
                words
            };
            format!("the server answered HTTP {}: {words}", status.code)
        } else if let Some(kube::Error::HyperError(inner)) = err.downcast_ref::<kube::Error>() {
            inner.to_string()
        } else if let Some(kube::Error::Service(inner)) = err.downcast_ref::<kube::Error>() {
            inner.to_string()
        } else {
            err.to_string()
        };
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            kind = kind.max(io_failure(io));
        }
        if err.is::<rustls::Error>() {
            kind = Failure::Tls;
        }
        // Wrappers repeat their cause's words: keep each piece once.
        if !text.is_empty() && !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
    }
    (kind, parts.join(": "))
}

/// The engine error for a failed cluster call while doing `what`.
pub fn engine_error(what: String, source: Cause) -> EngineError {
    let (kind, reason) = classify(source.as_ref());
    match kind {
        Failure::Tls => EngineError::Tls {
            what,
            reason,
            source,
        },
        Failure::Unreachable => EngineError::Unreachable {
            what,
            reason,
            source,
        },
        Failure::Unauthorized => EngineError::Unauthorized {
            what,
            reason,
            source,
        },
        Failure::Other => EngineError::Cluster {
            what,
            reason,
            source,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_api_answer_reads_as_the_server_s_words_not_a_struct() {
        let status = kube::core::Status::failure("Unauthorized", "Unauthorized").with_code(401);
        let e = kube::Error::Api(Box::new(status));
        let (kind, text) = classify(&e);
        assert_eq!(kind, Failure::Unauthorized);
        assert_eq!(text, "the server answered HTTP 401: Unauthorized");
        assert!(!text.contains("Status {"), "{text}");
    }

    #[test]
    fn a_refused_connection_and_a_certificate_error_are_told_apart() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(classify(&refused).0, Failure::Unreachable);
        // As the connector hands it over: the TLS stream's I/O error wrapped in another.
        let tls = std::io::Error::other(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer),
        ));
        let (kind, text) = classify(&tls);
        assert_eq!(kind, Failure::Tls);
        assert!(text.contains("invalid peer certificate"), "{text}");
    }

    #[test]
    fn the_kube_error_stays_reachable_as_the_source() {
        let status = kube::core::Status::failure("gone", "NotFound").with_code(404);
        let e = EngineError::cluster("reading ConfigMap/x", kube::Error::Api(Box::new(status)));
        assert_eq!(
            e.to_string(),
            "reading ConfigMap/x: the server answered HTTP 404: gone (reason NotFound)"
        );
        let source = StdError::source(&e).expect("a source");
        assert!(
            matches!(source.downcast_ref::<kube::Error>(), Some(kube::Error::Api(s)) if s.code == 404),
            "{source:?}"
        );
    }
}
