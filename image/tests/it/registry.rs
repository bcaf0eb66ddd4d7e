//! Delivery to a real registry (Debian's `docker-registry` on loopback): push, pull back by digest, skip
//! what is there, chunked uploads, a pinned base pulled from the registry.

use crate::support;

use piceli_image::Coded;
use std::collections::BTreeMap;

use piceli_image::layer::LayerBuilder;
use piceli_image::registry::CHUNK;
use piceli_image::spec::{
    CONFIG_MEDIA_TYPE, ImageConfig, MANIFEST_MEDIA_TYPE, Manifest, RootFs, RunConfig,
};
use piceli_image::{
    Blob, Digest, Image, ImageSpec, PinnedImage, RegistryClient, assemble, pull_base,
};
use support::LocalRegistry;

fn image() -> Image {
    assemble(&ImageSpec::new(support::tiny_app(), "tiny-app"), None).expect("assemble")
}

#[tokio::test]
async fn a_pushed_image_pulls_back_by_digest_and_a_second_push_uploads_nothing() {
    let registry = LocalRegistry::start();
    let client = RegistryClient::new(registry.repo("shop/tiny"), None).expect("client");
    let image = image();
    assert!(!client.has_manifest(&image.digest).await.expect("head"));

    let first = client.push(&image, None).await.expect("push");
    assert_eq!(first.uploaded.len(), image.blobs.len(), "{first:?}");
    assert!(first.skipped.is_empty());
    assert!(client.has_manifest(&image.digest).await.expect("head"));

    let pulled = client.pull(&image.digest).await.expect("pull");
    assert_eq!(pulled, image);

    let second = client.push(&image, None).await.expect("push again");
    assert!(second.uploaded.is_empty(), "{second:?}");
    assert_eq!(second.bytes, 0);
    assert!(second.manifest_existed);

    // A changed binary: a new digest, and only its layer and the config go up.
    let dir = tempfile::tempdir().expect("temp");
    let changed = dir.path().join("tiny-app");
    let mut bytes = std::fs::read(support::tiny_app()).expect("read");
    bytes.extend_from_slice(b"\0changed");
    std::fs::write(&changed, bytes).expect("write");
    let other = assemble(&ImageSpec::new(&changed, "tiny-app"), None).expect("assemble");
    assert_ne!(other.digest, image.digest);
    let third = client
        .push(&other, Some("latest"))
        .await
        .expect("push changed");
    assert_eq!(
        third.uploaded.len(),
        2,
        "config and the binary's layer: {third:?}"
    );
    assert_eq!(third.skipped, [image.blobs[1].descriptor.digest.clone()]);
    assert_eq!(
        client
            .pull(&other.digest)
            .await
            .expect("pull")
            .manifest_bytes,
        other.manifest_bytes
    );
    let (_, by_tag) = client.manifest("latest").await.expect("tag");
    assert_eq!(Digest::of(&by_tag), other.digest);
}

#[tokio::test]
async fn a_blob_larger_than_a_chunk_goes_up_in_chunks() {
    let registry = LocalRegistry::start();
    let client = RegistryClient::new(registry.repo("big"), None).expect("client");
    // Bytes that do not compress: xorshift noise, a bit over two chunks.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let noise: Vec<u8> = (0..CHUNK * 2 + 12345)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect();
    let digest = Digest::of(&noise);
    client
        .upload_blob(&digest, &noise)
        .await
        .expect("chunked upload");
    assert!(client.has_blob(&digest).await.expect("head"));
    assert_eq!(client.blob(&digest).await.expect("get"), noise);
}

#[tokio::test]
async fn an_image_is_built_on_a_pinned_base_pulled_from_the_registry() {
    let registry = LocalRegistry::start();
    let base = small_base();
    let base_client = RegistryClient::new(registry.repo("base/tiny-base"), None).expect("client");
    base_client.push(&base, Some("1")).await.expect("push base");
    let pinned = PinnedImage::parse(&format!(
        "{}/base/tiny-base:1@{}",
        registry.addr, base.digest
    ))
    .expect("pin");

    let pulled = pull_base(&pinned, None).await.expect("pull base");
    assert_eq!(pulled.digest, base.digest);
    let image = assemble(
        &ImageSpec::new(support::tiny_app(), "tiny-app"),
        Some(&pulled),
    )
    .expect("assemble");
    assert_eq!(
        image.manifest.layers.len(),
        2,
        "the base's layer and the binary's"
    );
    assert_eq!(image.manifest.layers[0], base.manifest.layers[0]);
    assert_eq!(
        image.manifest.annotations["org.opencontainers.image.base.digest"],
        base.digest.as_str()
    );
    let config: ImageConfig = serde_json::from_slice(&image.blobs[0].bytes).expect("config");
    assert!(config.config.env.contains(&"BASE=yes".to_string()));
    assert_eq!(config.config.user.as_deref(), Some("65532:65532"));
    // Same base, same binary: same digest.
    let again = assemble(
        &ImageSpec::new(support::tiny_app(), "tiny-app"),
        Some(&pulled),
    )
    .expect("assemble");
    assert_eq!(again.digest, image.digest);

    let app = RegistryClient::new(registry.repo("shop/on-base"), None).expect("client");
    app.push(&image, None).await.expect("push");
    assert_eq!(app.pull(&image.digest).await.expect("pull"), image);

    // A base that is not in the registry is an error naming it.
    let missing = PinnedImage::parse(&format!(
        "{}/base/none@{}",
        registry.addr,
        Digest::of(b"none")
    ))
    .expect("pin");
    let err = pull_base(&missing, None).await.expect_err("missing base");
    assert_eq!(err.code().as_str(), "PCL0193", "{err}");
}

#[tokio::test]
async fn an_unreachable_registry_is_a_coded_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("port")
        .local_addr()
        .expect("addr")
        .port();
    let repo = piceli_image::Repository::parse(&format!("127.0.0.1:{port}/x")).expect("repo");
    let client = RegistryClient::new(repo, None).expect("client");
    let err = client
        .push(&image(), None)
        .await
        .expect_err("nothing listens");
    assert_eq!(err.code().as_str(), "PCL0193", "{err}");
}

/// A one-layer base image (a file and an env var), made here and pushed by the test.
fn small_base() -> Image {
    let mut layer = LayerBuilder::new();
    layer
        .file("/etc/base-release", b"tiny base 1\n".to_vec(), 0o644)
        .expect("file");
    let layer = layer.build().expect("layer");
    let config = ImageConfig {
        architecture: piceli_image::spec::host_architecture().to_string(),
        os: "linux".into(),
        config: RunConfig {
            env: vec!["BASE=yes".into()],
            ..RunConfig::default()
        },
        rootfs: RootFs {
            kind: "layers".into(),
            diff_ids: vec![layer.diff_id.clone()],
        },
        history: Vec::new(),
    };
    let config_bytes = serde_json::to_vec(&config).expect("json");
    let config_blob = Blob {
        descriptor: piceli_image::spec::Descriptor {
            media_type: CONFIG_MEDIA_TYPE.into(),
            digest: Digest::of(&config_bytes),
            size: config_bytes.len() as u64,
            platform: None,
            annotations: BTreeMap::new(),
        },
        bytes: config_bytes,
    };
    let manifest = Manifest {
        schema_version: 2,
        media_type: Some(MANIFEST_MEDIA_TYPE.into()),
        config: config_blob.descriptor.clone(),
        layers: vec![layer.descriptor()],
        annotations: BTreeMap::new(),
    };
    let manifest_bytes = serde_json::to_vec(&manifest).expect("json");
    let layer_blob = Blob {
        descriptor: layer.descriptor(),
        bytes: layer.compressed,
    };
    Image {
        digest: Digest::of(&manifest_bytes),
        manifest,
        manifest_bytes,
        blobs: vec![config_blob, layer_blob],
    }
}

/// `tester` / `pw`, bcrypt (cost 5).
const HTPASSWD: &str = "tester:$2b$05$abcdefghijklmnopqrstuuHIrMEWpUCQe2YqFR3sXwQ75u4od..9q\n";

#[tokio::test]
async fn credentials_come_from_the_named_docker_config_only() {
    let registry = LocalRegistry::start_with_htpasswd(HTPASSWD);
    let image = image();

    let anonymous = RegistryClient::new(registry.repo("private/tiny"), None).expect("client");
    let err = anonymous
        .push(&image, None)
        .await
        .expect_err("no credentials");
    assert_eq!(err.code().as_str(), "PCL0194", "{err}");

    let dir = tempfile::tempdir().expect("temp");
    let write = |name: &str, auth: &str| {
        let path = dir.path().join(name);
        let text = format!(r#"{{"auths":{{"{}":{{"auth":"{auth}"}}}}}}"#, registry.addr);
        std::fs::write(&path, text).expect("write");
        piceli_image::DockerConfig::load(&path).expect("load")
    };
    // base64("tester:wrong") and base64("tester:pw").
    let wrong = write("wrong.json", "dGVzdGVyOndyb25n");
    let client = RegistryClient::new(registry.repo("private/tiny"), Some(&wrong)).expect("client");
    let err = client.push(&image, None).await.expect_err("wrong password");
    assert_eq!(err.code().as_str(), "PCL0194", "{err}");

    let right = write("right.json", "dGVzdGVyOnB3");
    let client = RegistryClient::new(registry.repo("private/tiny"), Some(&right)).expect("client");
    client
        .push(&image, None)
        .await
        .expect("push with credentials");
    assert_eq!(client.pull(&image.digest).await.expect("pull"), image);
}
