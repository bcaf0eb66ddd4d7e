//! The kubeconfig a simulator writes: one cluster, one user (bearer token), one context named
//! `piceli-sim` with namespace `default`.

use base64::Engine;

/// The context name every simulator kubeconfig uses.
pub const CONTEXT: &str = "piceli-sim";

/// Renders the kubeconfig YAML for a server URL, CA certificate (PEM) and token.
pub fn render(server: &str, ca_pem: &str, token: &str) -> String {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem.as_bytes());
    format!(
        "apiVersion: v1\n\
         kind: Config\n\
         clusters:\n\
         - name: {CONTEXT}\n  cluster:\n    server: {server}\n    certificate-authority-data: {ca}\n\
         users:\n\
         - name: {CONTEXT}\n  user:\n    token: {token}\n\
         contexts:\n\
         - name: {CONTEXT}\n  context:\n    cluster: {CONTEXT}\n    user: {CONTEXT}\n    namespace: default\n\
         current-context: {CONTEXT}\n\
         preferences: {{}}\n"
    )
}

/// The port of the server a kubeconfig written by [`render`] names (`server: https://127.0.0.1:PORT`).
pub fn port_of(kubeconfig: &str) -> Option<u16> {
    kubeconfig
        .lines()
        .find_map(|l| l.trim().strip_prefix("server: https://127.0.0.1:"))
        .and_then(|p| p.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_port_is_read_back() {
        assert_eq!(
            port_of(&render("https://127.0.0.1:6443", "", "t")),
            Some(6443)
        );
        assert_eq!(port_of("garbage"), None);
    }

    #[test]
    fn kube_parses_it() {
        let yaml = render(
            "https://127.0.0.1:6443",
            "-----BEGIN CERTIFICATE-----\n",
            "tok",
        );
        let cfg = kube::config::Kubeconfig::from_yaml(&yaml).expect("valid kubeconfig");
        assert_eq!(cfg.current_context.as_deref(), Some(CONTEXT));
        let ctx = cfg.contexts[0].context.as_ref().expect("context");
        assert_eq!(ctx.namespace.as_deref(), Some("default"));
        let user = cfg.auth_infos[0].auth_info.as_ref().expect("user");
        assert!(user.token.is_some());
    }
}
