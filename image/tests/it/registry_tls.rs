//! The registry client over HTTPS against a real docker-registry serving a certificate from a CA made
//! with openssl: trusting that CA explicitly (`with_ca`, `--registry-ca`) it pushes and pulls back by
//! digest; trusting another CA, or none, it is refused.

use crate::support;

use piceli_image::{ImageSpec, RegistryClient, assemble};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_with_its_own_ca_is_trusted_only_through_that_ca() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (ca, cert, key) = support::openssl_ca_and_server(dir.path());
    let registry = support::LocalRegistry::start_with_tls(&cert, &key);
    let image = assemble(&ImageSpec::new(support::tiny_app(), "tiny-app"), None).expect("assemble");
    let ca_pem = std::fs::read(&ca).expect("ca");

    let client = RegistryClient::with_ca(registry.repo("tls/tiny-app"), None, Some(&ca_pem))
        .expect("client");
    let report = client.push(&image, None).await.expect("push over HTTPS");
    assert_eq!(report.uploaded.len(), image.blobs.len());
    assert!(client.has_manifest(&image.digest).await.expect("head"));
    assert_eq!(client.pull(&image.digest).await.expect("pull"), image);

    // Another CA: the handshake fails, nothing is sent.
    let other = tempfile::tempdir().expect("temp dir");
    let (other_ca, _, _) = support::openssl_ca_and_server(other.path());
    let other_pem = std::fs::read(&other_ca).expect("ca");
    let untrusting = RegistryClient::with_ca(registry.repo("tls/tiny-app"), None, Some(&other_pem))
        .expect("client");
    let err = untrusting
        .has_manifest(&image.digest)
        .await
        .expect_err("a certificate from a CA not trusted");
    assert_eq!(piceli_image::Coded::code(&err).as_str(), "PCL0193", "{err}");

    // A file that holds no certificate is refused before any request.
    assert!(RegistryClient::with_ca(registry.repo("tls/x"), None, Some(b"not pem")).is_err());
}
