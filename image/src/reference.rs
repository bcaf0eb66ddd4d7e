//! Image references: a registry repository (`HOST[:PORT]/PATH`) and an image in it (`…@sha256:…`).

use std::fmt;

use crate::digest::Digest;
use crate::error::ImageError;

/// A repository in a registry: `127.0.0.1:5000/shop/api`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Repository {
    /// `HOST[:PORT]` as written (`docker.io` for Docker Hub's short names).
    pub registry: String,
    /// The repository path (`shop/api`).
    pub name: String,
}

impl Repository {
    /// Parses `HOST[:PORT]/PATH`; a name without a host is Docker Hub's (`debian` → `docker.io/library/debian`).
    pub fn parse(text: &str) -> Result<Repository, ImageError> {
        let bad = |help| ImageError::BadReference {
            text: text.to_string(),
            what: "repository",
            help,
        };
        let (registry, name) = match text.split_once('/') {
            Some((host, rest))
                if host.contains('.') || host.contains(':') || host == "localhost" =>
            {
                (host.to_string(), rest.to_string())
            }
            Some(_) => ("docker.io".to_string(), text.to_string()),
            None => ("docker.io".to_string(), format!("library/{text}")),
        };
        let name_ok = !name.is_empty()
            && name.split('/').all(|part| {
                !part.is_empty()
                    && part.bytes().all(|b| {
                        b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b)
                    })
            });
        if !name_ok {
            return Err(bad(
                "write HOST[:PORT]/PATH with a lowercase path, e.g. 127.0.0.1:5000/shop",
            ));
        }
        if registry.is_empty() || registry.contains(|c: char| c.is_whitespace() || c == '@') {
            return Err(bad("write HOST[:PORT]/PATH, e.g. ghcr.io/acme/shop"));
        }
        Ok(Repository { registry, name })
    }

    /// The repository `NAME` under this one (`…/shop` + `api` → `…/shop/api`).
    pub fn join(&self, name: &str) -> Result<Repository, ImageError> {
        Repository::parse(&format!("{self}/{name}"))
    }

    /// The host the distribution API is served on (Docker Hub's API lives apart from its name).
    pub fn api_host(&self) -> &str {
        if self.registry == "docker.io" {
            "registry-1.docker.io"
        } else {
            &self.registry
        }
    }

    /// Whether the registry is on loopback, where plain HTTP is used (as docker does for localhost).
    pub fn is_loopback(&self) -> bool {
        let host = self
            .registry
            .rsplit_once(':')
            .map_or(self.registry.as_str(), |(h, _)| h);
        matches!(host, "localhost" | "127.0.0.1" | "[::1]") || host.starts_with("127.")
    }

    /// `repo@digest`.
    pub fn at(&self, digest: &Digest) -> String {
        format!("{self}@{digest}")
    }
}

impl fmt::Display for Repository {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.registry, self.name)
    }
}

/// An image pinned by digest: `REPOSITORY@sha256:…` (a tag before the `@` is allowed and ignored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedImage {
    /// The repository (`HOST[:PORT]/PATH`); a tag written before the `@` is dropped.
    pub repository: Repository,
    /// The manifest digest it is pinned by (`sha256:<hex>`).
    pub digest: Digest,
}

impl PinnedImage {
    /// Parses `REPOSITORY[:TAG]@sha256:…`.
    pub fn parse(text: &str) -> Result<PinnedImage, ImageError> {
        let Some((repo, digest)) = text.rsplit_once('@') else {
            return Err(ImageError::BadReference {
                text: text.to_string(),
                what: "pinned image",
                help: "pin the image by digest: NAME@sha256:<64 hex digits>",
            });
        };
        let digest = Digest::parse(digest)?;
        let (head, last) = match repo.rsplit_once('/') {
            Some((head, last)) => (Some(head), last),
            None => (None, repo),
        };
        let last = last.split(':').next().unwrap_or(last);
        let repo = head.map_or_else(|| last.to_string(), |head| format!("{head}/{last}"));
        Ok(PinnedImage {
            repository: Repository::parse(&repo)?,
            digest,
        })
    }
}

impl fmt::Display for PinnedImage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.repository, self.digest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: &str = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    #[test]
    fn repositories_parse() {
        let r = Repository::parse("127.0.0.1:5000/shop").expect("parse");
        assert_eq!(
            (r.registry.as_str(), r.name.as_str()),
            ("127.0.0.1:5000", "shop")
        );
        assert!(r.is_loopback());
        assert_eq!(
            r.join("api").expect("join").to_string(),
            "127.0.0.1:5000/shop/api"
        );
        let hub = Repository::parse("debian").expect("parse");
        assert_eq!(hub.to_string(), "docker.io/library/debian");
        assert_eq!(hub.api_host(), "registry-1.docker.io");
        assert!(
            !Repository::parse("ghcr.io/acme/shop")
                .expect("parse")
                .is_loopback()
        );
        assert!(Repository::parse("ghcr.io/Acme").is_err());
        assert!(Repository::parse("ghcr.io/").is_err());
    }

    #[test]
    fn pinned_images_parse_with_or_without_a_tag() {
        let p = PinnedImage::parse(&format!("gcr.io/distroless/cc-debian12@{D}")).expect("parse");
        assert_eq!(p.repository.to_string(), "gcr.io/distroless/cc-debian12");
        let t = PinnedImage::parse(&format!("localhost:5000/base:1.2@{D}")).expect("parse");
        assert_eq!(t.repository.to_string(), "localhost:5000/base");
        assert_eq!(t.to_string(), format!("localhost:5000/base@{D}"));
        assert!(PinnedImage::parse("gcr.io/distroless/cc-debian12:latest").is_err());
    }
}
