//! Image assembly from a cargo-built binary: reproducible digests, the config and manifest, the OCI layout.

use crate::support;

use std::io::Read as _;

use piceli_image::spec::{
    ImageConfig, Index, LIBRARIES_ANNOTATION, REVISION_ANNOTATION, SOURCE_ANNOTATION,
};
use piceli_image::{Digest, ImageSpec, assemble};

fn spec(binary: &std::path::Path) -> ImageSpec {
    let mut spec = ImageSpec::new(binary, "tiny-app");
    spec.source = Some("https://example.invalid/tiny".into());
    spec.revision = Some("0123456789abcdef0123456789abcdef01234567".into());
    spec
}

fn layer_entries(bytes: &[u8]) -> Vec<(String, u64, u64, u64)> {
    let mut tar = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut tar)
        .expect("gunzip");
    let mut archive = tar::Archive::new(&tar[..]);
    archive
        .entries()
        .expect("entries")
        .map(|e| {
            let e = e.expect("entry");
            let h = e.header();
            let path = e.path().expect("path").to_string_lossy().into_owned();
            (
                path,
                h.mtime().expect("mtime"),
                h.uid().expect("uid"),
                h.gid().expect("gid"),
            )
        })
        .collect()
}

#[test]
fn two_builds_of_the_same_input_give_one_digest() {
    let binary = support::tiny_app();
    let first = assemble(&spec(binary), None).expect("assemble");
    // A copy elsewhere, written later (another mtime, another path on disk): the same image.
    let dir = tempfile::tempdir().expect("temp");
    let copy = dir.path().join("other-name");
    std::fs::copy(binary, &copy).expect("copy");
    let second = assemble(&spec(&copy), None).expect("assemble");
    assert_eq!(first.digest, second.digest);
    assert_eq!(first, second);
    // And cargo building it again (nothing changed) gives the same binary and digest.
    let again = piceli_image::cargo::CargoBuild {
        dir: support::fixture_dir(),
        package: "tiny-app".into(),
        bin: Some("tiny-app".into()),
        target_dir: Some(support::fixture_target()),
    }
    .run()
    .expect("build");
    assert_eq!(
        assemble(&spec(&again), None).expect("assemble").digest,
        first.digest
    );
}

#[test]
fn the_image_runs_the_binary_as_a_non_root_user_with_its_libraries() {
    let image = assemble(&spec(support::tiny_app()), None).expect("assemble");
    assert_eq!(Digest::of(&image.manifest_bytes), image.digest);
    let config: ImageConfig = serde_json::from_slice(&image.blobs[0].bytes).expect("config");
    assert_eq!(config.config.user.as_deref(), Some("65532:65532"));
    assert_eq!(config.config.entrypoint, ["/app/tiny-app"]);
    assert_eq!(config.os, "linux");
    assert_eq!(
        config.config.labels[SOURCE_ANNOTATION],
        "https://example.invalid/tiny"
    );
    assert_eq!(
        image.manifest.annotations[REVISION_ANNOTATION],
        "0123456789abcdef0123456789abcdef01234567"
    );
    assert_eq!(config.rootfs.diff_ids.len(), image.manifest.layers.len());
    for blob in &image.blobs {
        assert_eq!(Digest::of(&blob.bytes), blob.descriptor.digest);
        assert_eq!(blob.bytes.len() as u64, blob.descriptor.size);
    }

    // The fixture links libc dynamically on this host: the libraries layer carries what ldd lists.
    let libs = &image.manifest.annotations[LIBRARIES_ANNOTATION];
    assert!(libs.contains("libc.so"), "{libs}");
    let system = layer_entries(&image.blobs[1].bytes);
    for lib in libs.split(',') {
        assert!(
            system.iter().any(|e| e.0 == lib.trim_start_matches('/')),
            "{lib} not in {system:?}"
        );
    }
    assert!(system.iter().any(|e| e.0 == "etc/passwd"));
    let app = layer_entries(&image.blobs[2].bytes);
    assert_eq!(
        app.iter().map(|e| e.0.as_str()).collect::<Vec<_>>(),
        ["app/", "app/tiny-app"]
    );
    assert!(
        system
            .iter()
            .chain(&app)
            .all(|e| e.1 == 0 && e.2 == 0 && e.3 == 0),
        "fixed mtimes, root-owned files"
    );
}

#[test]
fn a_changed_source_gives_a_new_digest() {
    let dir = tempfile::tempdir().expect("temp");
    let fixture = support::fixture_dir();
    std::fs::create_dir_all(dir.path().join("src")).expect("mkdir");
    for file in ["Cargo.toml", "Cargo.lock", "src/main.rs"] {
        std::fs::copy(fixture.join(file), dir.path().join(file)).expect("copy");
    }
    let main = dir.path().join("src/main.rs");
    let text = std::fs::read_to_string(&main)
        .expect("read")
        .replace("says hello", "says hello again");
    std::fs::write(&main, text).expect("write");
    let changed = piceli_image::cargo::CargoBuild {
        dir: dir.path().to_path_buf(),
        package: "tiny-app".into(),
        bin: None,
        target_dir: Some(support::fixture_target().join("changed")),
    }
    .run()
    .expect("build");
    let before = assemble(&spec(support::tiny_app()), None).expect("assemble");
    let after = assemble(&spec(&changed), None).expect("assemble");
    assert_ne!(before.digest, after.digest);
    // Only the binary's layer (and the config naming it) changed; the libraries layer is shared.
    assert_eq!(before.manifest.layers[0], after.manifest.layers[0]);
    assert_ne!(before.manifest.layers[1], after.manifest.layers[1]);
}

#[test]
fn an_oci_layout_holds_the_image() {
    let image = assemble(&spec(support::tiny_app()), None).expect("assemble");
    let dir = tempfile::tempdir().expect("temp");
    let layout = dir.path().join("oci");
    piceli_image::layout::write_layout(&layout, &image, "tiny-app").expect("write");
    let oci_layout = std::fs::read_to_string(layout.join("oci-layout")).expect("oci-layout");
    assert!(oci_layout.contains("\"imageLayoutVersion\":\"1.0.0\""));
    let index: Index =
        serde_json::from_slice(&std::fs::read(layout.join("index.json")).expect("index"))
            .expect("json");
    assert_eq!(index.manifests.len(), 1);
    assert_eq!(index.manifests[0].digest, image.digest);
    let blob = |d: &Digest| std::fs::read(layout.join("blobs/sha256").join(d.hex())).expect("blob");
    assert_eq!(blob(&image.digest), image.manifest_bytes);
    for b in &image.blobs {
        assert_eq!(Digest::of(&blob(&b.descriptor.digest)), b.descriptor.digest);
    }
    // Writing it again changes nothing.
    piceli_image::layout::write_layout(&layout, &image, "tiny-app").expect("write again");
    assert_eq!(blob(&image.digest), image.manifest_bytes);
}
