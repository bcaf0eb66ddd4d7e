//! Images built from this workspace: cargo names, a base pinned by digest, one way to build each image,
//! and targets' registries written `HOST[:PORT]/PATH`.

use super::Ctx;
use crate::codes::Code;
use crate::model::App;
use crate::rules;

pub(super) fn check(cx: &mut Ctx, app: &App) {
    for (i, b) in app.builds.iter().enumerate() {
        for name in std::iter::once(&b.package).chain(b.bin.as_ref()) {
            if let Some(text) = cx.known(name) {
                cx.rule(Code::InvalidBuildName, name.at, cargo_name(text));
            }
        }
        if let Some(base) = &b.base
            && let Some(text) = cx.known(base)
        {
            cx.rule(Code::BuildBaseNotPinned, base.at, pinned_base(text));
        }
        if let Some(first) = app.builds[..i].iter().find(|o| o.image.v == b.image.v)
            && first.base.as_ref().map(|s| &s.v) != b.base.as_ref().map(|s| &s.v)
        {
            cx.error(
                Code::BuildConflict,
                b.image.at,
                format!("`{}` is built twice with different bases", b.image.v),
                "give every `build(package: …)` of one package and binary the same `base:`",
            );
        }
    }
    for t in &app.targets {
        if let Some(registry) = &t.registry
            && let Some(text) = cx.known(registry)
        {
            cx.rule(
                Code::InvalidRegistry,
                registry.at,
                registry_repository(text),
            );
        }
    }
}

/// A cargo package or binary name: ASCII letters, digits, `-` and `_`.
pub fn cargo_name(s: &str) -> Result<(), rules::RuleError> {
    let ok = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(rules::RuleError::new(
            format!("`{s}` is not a cargo package or binary name"),
            "write the name from the package's Cargo.toml: letters, digits, `-` and `_`, e.g. `shop-api`",
        ))
    }
}

/// A base image must be pinned: `NAME@sha256:<64 hex digits>`.
pub fn pinned_base(s: &str) -> Result<(), rules::RuleError> {
    let parsed = rules::parse_image(s)?;
    match parsed.digest {
        Some(d) if d.starts_with("sha256:") => Ok(()),
        _ => Err(rules::RuleError::new(
            format!("the base image `{s}` is not pinned by a sha256 digest"),
            "pin the base: `base: \"gcr.io/distroless/cc-debian12@sha256:<64 hex digits>\"`, so that the same \
             sources always give the same image",
        )),
    }
}

/// A registry repository: `HOST[:PORT]/PATH` with a lowercase path.
pub fn registry_repository(s: &str) -> Result<(), rules::RuleError> {
    let help = "write `HOST[:PORT]/PATH`, e.g. `127.0.0.1:5000/shop` or `ghcr.io/acme/shop` (no scheme, no tag)";
    let bad = |what: &str| {
        Err(rules::RuleError::new(
            format!("registry `{s}`: {what}"),
            help,
        ))
    };
    let Some((host, path)) = s.split_once('/') else {
        return bad("has no repository path after the host");
    };
    if !(host.contains('.') || host.contains(':') || host == "localhost") {
        return bad(
            "the first part is not a host (a host has a `.` or a `:PORT`, or is `localhost`)",
        );
    }
    if host.contains("://") || s.contains("://") {
        return bad("has a scheme");
    }
    let path_ok = path.split('/').all(|p| {
        !p.is_empty()
            && p.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b))
    });
    if !path_ok {
        return bad(
            "the path must be lowercase letters, digits, `.`, `_` and `-`, parts separated by `/`",
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registries_bases_and_names() {
        assert!(registry_repository("127.0.0.1:5000/shop").is_ok());
        assert!(registry_repository("ghcr.io/acme/shop").is_ok());
        assert!(registry_repository("ghcr.io").is_err());
        assert!(registry_repository("shop/api").is_err());
        assert!(registry_repository("https://ghcr.io/acme").is_err());
        assert!(registry_repository("ghcr.io/Acme").is_err());
        let d = "sha256:".to_string() + &"a".repeat(64);
        assert!(pinned_base(&format!("gcr.io/distroless/cc-debian12@{d}")).is_ok());
        assert!(pinned_base("gcr.io/distroless/cc-debian12:latest").is_err());
        assert!(cargo_name("shop-api").is_ok());
        assert!(cargo_name("shop api").is_err());
        assert!(cargo_name("").is_err());
    }
}
