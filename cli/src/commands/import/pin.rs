//! `import --pin`: ask each unpinned image's registry for the digest its tag names now (piceli-image's
//! client: `HEAD manifests/TAG`, `Docker-Content-Digest`; credentials only from `--registry-auth FILE`).
//! What cannot be resolved stays `unpinned("…")` with a PCL0189 warning giving the reason.

use crate::exit::Failure;
use piceli_core::Code;
use piceli_image::{DockerConfig, RegistryClient, Repository};
use piceli_import::Warning;
use piceli_import::pin::split_tag;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

/// How long one registry may take to answer.
const TIMEOUT: Duration = Duration::from_secs(5);

/// What `--pin` found: image → pinned reference, image → why not, and the warnings for the latter.
#[derive(Debug, Default)]
pub struct Pins {
    /// `nginx:1.27` → `nginx:1.27@sha256:…`.
    pub pinned: BTreeMap<String, String>,
    /// `nginx:1.27` → why it stays unpinned.
    pub failed: BTreeMap<String, String>,
    /// One PCL0189 warning per image that stays unpinned.
    pub warnings: Vec<Warning>,
}

/// Resolve every image (concurrently, each bounded by [`TIMEOUT`]).
pub fn resolve(images: &BTreeSet<String>, auth_file: Option<&Path>) -> Result<Pins, Failure> {
    let auth = match auth_file {
        Some(p) => Some(DockerConfig::load(p).map_err(|e| {
            Failure::new(
                Code::ImportPinAuthUnreadable,
                format!("`--registry-auth {}`: {e}", p.display()),
                "name a docker config file with an `auths` entry for the registry".into(),
            )
        })?),
        None => None,
    };
    let answers = crate::session::block_on(async {
        let asks = images.iter().map(|image| {
            let auth = auth.as_ref();
            async move { (image.clone(), digest(image, auth).await) }
        });
        futures::future::join_all(asks).await
    })?;
    let mut pins = Pins::default();
    for (image, answer) in answers {
        match answer {
            Ok(digest) => {
                pins.pinned
                    .insert(image.clone(), format!("{image}@{digest}"));
            }
            Err(why) => {
                pins.warnings.push(Warning::new(
                    Code::ImportPinFailed,
                    format!("image {image}"),
                    format!(
                        "`--pin` could not resolve it ({why}); imported as `unpinned(\"{image}\")`"
                    ),
                ));
                pins.failed.insert(image, why);
            }
        }
    }
    Ok(pins)
}

async fn digest(image: &str, auth: Option<&DockerConfig>) -> Result<String, String> {
    let (name, tag) = split_tag(image);
    let repository = Repository::parse(name).map_err(|e| e.to_string())?;
    let client = RegistryClient::new(repository.clone(), auth).map_err(|e| e.to_string())?;
    match tokio::time::timeout(TIMEOUT, client.digest_of(tag)).await {
        Err(_) => Err(format!(
            "{} did not answer within {} s",
            repository.registry,
            TIMEOUT.as_secs()
        )),
        Ok(Err(e)) => Err(e.to_string()),
        Ok(Ok(None)) => Err(format!("{repository} has no tag `{tag}`")),
        Ok(Ok(Some(d))) => Ok(d.to_string()),
    }
}
