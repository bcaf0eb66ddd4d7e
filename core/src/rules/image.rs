//! Container image references, parsed by the docker distribution reference
//! grammar (`[registry/]repository[:tag][@digest]`), and the rule that an
//! image must be pinned by digest.

use super::RuleError;
use std::fmt;

/// Longest image name (registry and repository, without tag or digest).
pub const IMAGE_NAME_MAX: usize = 255;
/// Longest image tag.
pub const IMAGE_TAG_MAX: usize = 128;

/// A parsed image reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRef {
    /// Registry host with optional port (`ghcr.io`, `localhost:5000`); `None`
    /// means Docker Hub. A first path part counts as a registry when it
    /// contains '.' or ':' or is `localhost` (Docker's rule).
    pub registry: Option<String>,
    /// Repository path, e.g. `library/nginx` or `org/app`.
    pub repository: String,
    /// Tag, e.g. `1.27`.
    pub tag: Option<String>,
    /// Digest including its algorithm, e.g. `sha256:0123…`.
    pub digest: Option<String>,
}

impl fmt::Display for ImageRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(r) = &self.registry {
            write!(f, "{r}/")?;
        }
        write!(f, "{}", self.repository)?;
        if let Some(t) = &self.tag {
            write!(f, ":{t}")?;
        }
        if let Some(d) = &self.digest {
            write!(f, "@{d}")?;
        }
        Ok(())
    }
}

const HELP: &str =
    "write an image reference like `ghcr.io/org/app:v1` or `nginx:1.27@sha256:<64 hex digits>`";
const DIGEST_HELP: &str = "a digest is `sha256:` followed by 64 lowercase hex digits, e.g. from `docker buildx imagetools inspect <image>`";

fn err(s: &str, what: impl fmt::Display, help: impl Into<String>) -> RuleError {
    RuleError::new(format!("image `{s}`: {what}"), help)
}

/// Parses an image reference by the docker distribution reference grammar.
pub fn parse_image(s: &str) -> Result<ImageRef, RuleError> {
    if s.is_empty() {
        return Err(RuleError::new("image reference must not be empty", HELP));
    }
    if let Some(c) = s.chars().find(|c| c.is_whitespace() || c.is_control()) {
        return Err(err(s, format_args!("contains {c:?}"), HELP));
    }
    if let Some(i) = s.find("://") {
        return Err(err(
            s,
            "has a URL scheme",
            format!("remove `{}`; image references have no scheme", &s[..i + 3]),
        ));
    }
    let (rest, digest) = match s.split_once('@') {
        Some((r, d)) => {
            check_digest(s, d)?;
            (r, Some(d.to_string()))
        }
        None => (s, None),
    };
    let last_slash = rest.rfind('/').map_or(0, |i| i + 1);
    let (name, tag) = match rest[last_slash..].rfind(':') {
        Some(i) => {
            let t = &rest[last_slash + i + 1..];
            check_tag(s, t)?;
            (&rest[..last_slash + i], Some(t.to_string()))
        }
        None => (rest, None),
    };
    if name.is_empty() {
        return Err(err(s, "has no repository name", HELP));
    }
    if name.len() > IMAGE_NAME_MAX {
        return Err(err(
            s,
            format_args!(
                "name is {} characters, over the limit of {IMAGE_NAME_MAX}",
                name.len()
            ),
            "use a shorter registry or repository path",
        ));
    }
    let (registry, repository) = match name.split_once('/') {
        Some((first, path))
            if first.contains('.') || first.contains(':') || first == "localhost" =>
        {
            check_domain(s, first)?;
            (Some(first.to_string()), path)
        }
        _ => (None, name),
    };
    check_repository(s, repository)?;
    Ok(ImageRef {
        registry,
        repository: repository.to_string(),
        tag,
        digest,
    })
}

/// Fails unless the image is pinned by digest (`…@sha256:<hex>`).
pub fn require_digest(s: &str) -> Result<(), RuleError> {
    let image = parse_image(s)?;
    if image.digest.is_some() {
        return Ok(());
    }
    Err(RuleError::new(
        format!("image `{s}` is not pinned by digest, so the same manifest may run different code"),
        format!(
            "pin it with `@sha256:<digest>` (`{s}@sha256:<64 hex digits>`), or opt out explicitly with `image: unpinned(\"{s}\")`"
        ),
    ))
}

fn check_digest(s: &str, d: &str) -> Result<(), RuleError> {
    let Some((alg, hex)) = d.split_once(':') else {
        return Err(err(
            s,
            format_args!("digest `{d}` has no algorithm"),
            DIGEST_HELP,
        ));
    };
    let alg_ok = !alg.is_empty()
        && alg.split(['+', '.', '_', '-']).all(|c| {
            c.starts_with(|c: char| c.is_ascii_alphabetic())
                && c.chars().all(|c| c.is_ascii_alphanumeric())
        });
    if !alg_ok {
        return Err(err(
            s,
            format_args!("digest algorithm `{alg}` is invalid"),
            DIGEST_HELP,
        ));
    }
    let want = match alg {
        "sha256" => Some(64),
        "sha384" => Some(96),
        "sha512" => Some(128),
        _ => None,
    };
    let ok = match want {
        Some(n) => {
            hex.len() == n
                && hex
                    .chars()
                    .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
        }
        None => hex.len() >= 32 && hex.chars().all(|c| c.is_ascii_hexdigit()),
    };
    if ok {
        return Ok(());
    }
    let what = match want {
        Some(n) => format!("{n} lowercase hex digits"),
        None => "at least 32 hex digits".to_string(),
    };
    Err(err(
        s,
        format_args!("digest `{d}` must be `{alg}:` followed by {what}"),
        DIGEST_HELP,
    ))
}

fn check_tag(s: &str, t: &str) -> Result<(), RuleError> {
    let help = "a tag is 1–128 letters, digits, '_', '.' and '-', not starting with '.' or '-', e.g. `:v1.2.3`";
    if t.is_empty() {
        return Err(err(
            s,
            "has an empty tag after ':'",
            "add a tag after ':' (e.g. `:v1`) or remove the ':'",
        ));
    }
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if t.len() > IMAGE_TAG_MAX {
        return Err(err(
            s,
            format_args!(
                "tag is {} characters, over the limit of {IMAGE_TAG_MAX}",
                t.len()
            ),
            help,
        ));
    }
    if !t.starts_with(word) || !t.chars().all(|c| word(c) || c == '.' || c == '-') {
        return Err(err(s, format_args!("tag `{t}` is invalid"), help));
    }
    Ok(())
}

fn check_domain(s: &str, d: &str) -> Result<(), RuleError> {
    let help =
        "a registry is a host name with an optional port, e.g. `ghcr.io` or `localhost:5000`";
    let bad = |what: &str| Err(err(s, format_args!("registry `{d}` {what}"), help));
    let (host, port) = if let Some(inner) = d.strip_prefix('[') {
        let Some((v6, after)) = inner.split_once(']') else {
            return bad("has an unclosed '['");
        };
        if v6.is_empty() || !v6.chars().all(|c| c.is_ascii_hexdigit() || c == ':') {
            return bad("has an invalid IPv6 address");
        }
        match after {
            "" => ("", None),
            _ => match after.strip_prefix(':') {
                Some(p) => ("", Some(p)),
                None => return bad("has text after ']'"),
            },
        }
    } else {
        match d.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (d, None),
        }
    };
    if let Some(p) = port
        && (p.is_empty() || !p.chars().all(|c| c.is_ascii_digit()))
    {
        return bad("has an invalid port");
    }
    let component_ok = |c: &str| {
        !c.is_empty()
            && c.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !c.starts_with('-')
            && !c.ends_with('-')
    };
    if !d.starts_with('[') && !host.split('.').all(component_ok) {
        return bad("is not a valid host name");
    }
    Ok(())
}

/// `path-component := [a-z0-9]+ (([._]|__|-+) [a-z0-9]+)*`, joined by '/'.
fn check_repository(s: &str, repo: &str) -> Result<(), RuleError> {
    if repo.chars().any(|c| c.is_ascii_uppercase()) {
        return Err(err(
            s,
            format_args!("repository `{repo}` contains uppercase letters"),
            format!(
                "repository names must be lowercase; try `{}`",
                s.replacen(repo, &repo.to_ascii_lowercase(), 1)
            ),
        ));
    }
    let help = "repository path parts are lowercase letters and digits, separated by '.', '_', '__' or dashes, e.g. `org/my-app`";
    for part in repo.split('/') {
        if part.is_empty() {
            return Err(err(
                s,
                format_args!("repository `{repo}` has an empty path part"),
                help,
            ));
        }
        let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
        if !part.starts_with(alnum) || !part.ends_with(alnum) {
            return Err(err(
                s,
                format_args!("repository part `{part}` must start and end with a letter or digit"),
                help,
            ));
        }
        for sep in part.split(alnum).filter(|x| !x.is_empty()) {
            if !(sep == "." || sep == "_" || sep == "__" || sep.chars().all(|c| c == '-')) {
                return Err(err(
                    s,
                    format_args!("repository part `{part}` has invalid separator `{sep}`"),
                    help,
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    /// `registry|repository|tag|digest`, `-` for absent parts.
    fn parts(s: &str) -> String {
        let i = parse_image(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        let o = |x: &Option<String>| x.clone().unwrap_or_else(|| "-".into());
        format!(
            "{}|{}|{}|{}",
            o(&i.registry),
            i.repository,
            o(&i.tag),
            o(&i.digest)
        )
    }

    #[test]
    fn real_world_references() {
        let s = format!("docker.io/library/nginx:1.27@sha256:{HEX}");
        assert_eq!(
            parts(&s),
            format!("docker.io|library/nginx|1.27|sha256:{HEX}")
        );
        assert_eq!(parse_image(&s).map(|i| i.to_string()), Ok(s.clone()));
        assert_eq!(parts("ghcr.io/org/app:v1"), "ghcr.io|org/app|v1|-");
        assert_eq!(parts("localhost:5000/a/b"), "localhost:5000|a/b|-|-");
        assert_eq!(
            parts("registry.k8s.io/pause:3.10"),
            "registry.k8s.io|pause|3.10|-"
        );
        let gb = "gcr.io|google-samples/gb-frontend|v5|-";
        assert_eq!(parts("gcr.io/google-samples/gb-frontend:v5"), gb);
        assert_eq!(parts("nginx"), "-|nginx|-|-");
        assert_eq!(parts("library/nginx:latest"), "-|library/nginx|latest|-");
        assert_eq!(parts("localhost:5000"), "-|localhost|5000|-");
        assert_eq!(parts("[::1]:5000/app"), "[::1]:5000|app|-|-");
        let pinned = format!("nginx@sha256:{HEX}");
        assert_eq!(parts(&pinned), format!("-|nginx|-|sha256:{HEX}"));
    }

    #[test]
    fn grammar_edges_accepted() {
        for s in "a__b/c.d/e---f|a_b.c|localhost/app|[::1]:5000/app|\
            my-reg.example.com:443/x/y:Tag_1.0-rc|localhost:5000|x:_tag|foo/bar|\
            Registry.Example.com/app"
            .split('|')
        {
            assert!(parse_image(s).is_ok(), "{s}: {:?}", parse_image(s));
        }
        assert!(parse_image(&format!("a:{}", "t".repeat(128))).is_ok());
        assert!(parse_image(&format!("a@sha512:{}", "a".repeat(128))).is_ok());
        assert!(parse_image(&format!("a@multihash+base58:{}", "A".repeat(32))).is_ok());
        assert!(parse_image(&format!("{}/{}", "r.io", "a".repeat(250))).is_ok()); // 255
    }

    #[test]
    fn bad_references() {
        for s in "| |nginx |ng inx|nginx:|Nginx|ghcr.io/Org/app|a//b|/a|a/|-a|a-|a___b|\
            a..b|a_-b|nginx:.x|nginx:-x|nginx:a/b|nginx@|nginx@sha256:abc|\
            nginx@sha256|https://ghcr.io/a|ghcr.io:/a|ghcr.io:x/a|-bad.io/a|\
            [::1/a|a:b:c|a@b@c"
            .split('|')
        {
            assert!(
                parse_image(s).is_err(),
                "{s} should be rejected: {:?}",
                parse_image(s)
            );
        }
        assert!(parse_image(&format!("a:{}", "t".repeat(129))).is_err());
        assert!(parse_image(&format!("a@sha256:{}", HEX.to_uppercase())).is_err());
        assert!(parse_image(&format!("a@sha256:{HEX}0")).is_err());
        assert!(parse_image(&format!("a@x:{}", "a".repeat(31))).is_err());
        assert!(parse_image(&format!("a@1x:{}", "a".repeat(32))).is_err());
        assert!(parse_image(&format!("{}/{}", "r.io", "a".repeat(251))).is_err()); // 256
    }

    #[test]
    fn error_texts() {
        let e = parse_image("ghcr.io/MyOrg/App:v1").unwrap_err();
        assert!(e.message.contains("`ghcr.io/MyOrg/App:v1`"), "{e:?}");
        assert!(e.help.contains("try `ghcr.io/myorg/app:v1`"), "{e:?}");
        let e = parse_image("nginx:").unwrap_err();
        assert!(e.help.contains("add a tag"), "{e:?}");
        let e = parse_image("https://ghcr.io/a").unwrap_err();
        assert!(e.help.contains("remove `https://`"), "{e:?}");
        assert_eq!(
            parse_image("").unwrap_err().message,
            "image reference must not be empty"
        );
    }

    #[test]
    fn digest_required() {
        assert!(require_digest(&format!("nginx:1.27@sha256:{HEX}")).is_ok());
        let e = require_digest("nginx:1.27").unwrap_err();
        assert!(e.message.contains("`nginx:1.27`"));
        assert!(
            e.help.contains("@sha256:<digest>") && e.help.contains("unpinned(\"nginx:1.27\")"),
            "{e:?}"
        );
        assert!(require_digest("Bad Image").is_err());
    }
}
