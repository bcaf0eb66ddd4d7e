//! Laying out an app crate: `Cargo.toml` (with the dev profile that keeps edit → build → render fast),
//! `src/main.rs`, `README.md`, and the import's `.env.example` and included objects. Used by
//! `import --crate DIR` and `piceli new NAME`; an existing `Cargo.toml` is never overwritten.

use crate::Imported;
use crate::error::ImportError;
use std::path::{Path, PathBuf};

/// How the crate depends on piceli.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PiceliDep {
    /// `piceli = { path = "…" }`: a checkout of Piceli (what works from a fresh clone).
    Path(PathBuf),
    /// `piceli = "…"`: a published version.
    Version(String),
}

impl PiceliDep {
    /// The release line of this build, `MAJOR.MINOR` (`piceli = "0.1"`): any semver-compatible published
    /// version. A checkout is asked for with `--piceli-path`.
    pub fn published() -> PiceliDep {
        PiceliDep::Version(release_line(env!("CARGO_PKG_VERSION")))
    }

    /// `--piceli-path PATH` when given (made absolute when it exists), else [`PiceliDep::published`].
    pub fn from_flag(path: Option<&Path>) -> PiceliDep {
        match path {
            Some(p) => PiceliDep::Path(p.canonicalize().unwrap_or_else(|_| p.to_path_buf())),
            None => PiceliDep::published(),
        }
    }

    /// The dependency line, with piceli's `features` (e.g. `operator`) when there are any.
    fn toml(&self, features: &[&str]) -> String {
        let features = if features.is_empty() {
            String::new()
        } else {
            format!(", features = {features:?}")
        };
        match self {
            PiceliDep::Path(p) => format!(
                "piceli = {{ path = {:?}{features} }}",
                p.display().to_string()
            ),
            PiceliDep::Version(v) if features.is_empty() => format!("piceli = {v:?}"),
            PiceliDep::Version(v) => format!("piceli = {{ version = {v:?}{features} }}"),
        }
    }
}

/// `MAJOR.MINOR` of a version (`0.1.0` → `0.1`, `1.2.3-rc.1` → `1.2`).
fn release_line(version: &str) -> String {
    let core = version.split(['-', '+']).next().unwrap_or(version);
    core.split('.').take(2).collect::<Vec<_>>().join(".")
}

/// The dev profile of generated crates (docs/new.md explains and measures it): no debug info and no
/// optimisation for dependencies (a first build in under two minutes on 2 cores), build scripts and the
/// `app!` macro built alike (so a crate both use, such as piceli-core, compiles once), line tables for the
/// app (backtraces keep file:line).
pub const DEV_PROFILE: &str = "\
# A fast first build and edit -> build -> render (see Piceli's docs/new.md): dependencies without debug
# info or optimisation, build scripts and the app! macro the same way (a crate both use compiles once),
# the app with line tables only (backtraces keep file:line).
[profile.dev]
debug = \"line-tables-only\"

[profile.dev.package.\"*\"]
debug = false

[profile.dev.build-override]
debug = false
";

/// The release profile of an operator crate (one with the `operator` feature): its image is built with
/// `cargo build --release` (`render --containerfile`), and `serve` with thin LTO answers 6–10 % more
/// admission reviews per second (docs/benchmarks.md).
pub const OPERATOR_RELEASE_PROFILE: &str = "\
# The operator's image (`render --containerfile` builds --release): thin LTO makes `serve` 6-10 % faster
# (see Piceli's docs/benchmarks.md) for a longer link.
[profile.release]
lto = \"thin\"
codegen-units = 4
";

/// `Cargo.toml` of an app crate named `name`, depending on piceli with `features`.
pub fn cargo_toml(name: &str, dep: &PiceliDep, features: &[&str]) -> String {
    let release = match features.contains(&"operator") {
        true => format!("\n{OPERATOR_RELEASE_PROFILE}"),
        false => String::new(),
    };
    format!(
        "[package]\nname = {name:?}\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\n{}\n\n{DEV_PROFILE}{release}\n\
         # A crate of its own, also when it sits inside another workspace's directory.\n[workspace]\n",
        dep.toml(features)
    )
}

/// `README.md` of an app crate.
pub fn readme(name: &str) -> String {
    format!(
        "# {name}\n\nA Kubernetes app described with `piceli::app!` in `src/main.rs`.\n\n\
         ```sh\ncargo run -- render              # print its Kubernetes objects\n\
         cargo run -- plan --target local  # what would change on the local cluster (`piceli sim start`)\n```\n\n\
         Bring existing manifests in with `piceli import yaml k8s/ --out src/main.rs`, or a running namespace \
         with `piceli import live --kubeconfig FILE --context NAME --namespace NS --out src/main.rs`.\n"
    )
}

/// The starter app `piceli new` writes: the quick start's nginx, a Service and a check.
pub fn starter_source(name: &str) -> String {
    let module = name.replace('-', "_");
    format!(
        "//! The `{name}` app. `cargo run -- render` prints its Kubernetes objects.\n\n\
         piceli::app! {{\n    app {name};\n    target local = local(namespace: {name:?});\n\n\
         \x20   deployment web {{\n        image: \"docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d\",\n\
         \x20       replicas: 2,\n        ports: {{ http: 80 }},\n        ready: http_get(\"/\", port: http),\n\
         \x20       resources: {{ cpu: \"100m\", memory: \"64Mi\" }},\n    }}\n\n\
         \x20   service web -> web {{\n        port: 80 => http,\n        access: forward(local: 18080, health: \"/\"),\n    }}\n\n\
         \x20   check http(web, \"/\", expect: 200);\n}}\n\n\
         fn main() -> std::process::ExitCode {{\n    {module}::main()\n}}\n"
    )
}

/// The operator skeleton `piceli new --operator` writes: `src/main.rs` (the `app!` with a custom resource, a
/// controller and a validating webhook) and `src/greeting.rs` (the resource and the handlers), for the app
/// `name` (a DNS label).
pub fn operator_sources(name: &str) -> (String, String) {
    let fill = |t: &str| {
        t.replace("__NAME__", name)
            .replace("__MODULE__", &name.replace('-', "_"))
    };
    (
        fill(include_str!("templates/operator_main.rs.in")),
        fill(include_str!("templates/operator_greeting.rs.in")),
    )
}

/// Write a new crate at `dir` (created; refused when it already has a `Cargo.toml`), depending on piceli
/// with `features`.
pub fn write_crate(
    dir: &Path,
    name: &str,
    dep: &PiceliDep,
    features: &[&str],
    source: &str,
    imported: Option<&Imported>,
    include_path: &str,
) -> Result<Vec<PathBuf>, ImportError> {
    if dir.join("Cargo.toml").exists() {
        return Err(ImportError::Output {
            path: dir.join("Cargo.toml").display().to_string(),
            message: "a crate is already there; nothing was overwritten".into(),
        });
    }
    let mut files = vec![
        (dir.join("Cargo.toml"), cargo_toml(name, dep, features)),
        (dir.join("README.md"), readme(name)),
        (dir.join("src/main.rs"), source.to_string()),
        (dir.join(".gitignore"), "/target\n.env\n".to_string()),
    ];
    if let Some(i) = imported {
        files.extend(extra_files(dir, i, include_path));
    }
    for (path, text) in &files {
        write_file(path, text)?;
    }
    Ok(files.into_iter().map(|(p, _)| p).collect())
}

/// `.env.example` and the included objects of an import, under the crate directory `root`.
pub fn extra_files(root: &Path, i: &Imported, include_path: &str) -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    if !i.env_example.is_empty() {
        files.push((root.join(".env.example"), i.env_example.clone()));
    }
    if let Some(inc) = &i.includes {
        files.push((root.join(include_path), inc.clone()));
    }
    files
}

/// Write one file, making its directory.
pub fn write_file(path: &Path, text: &str) -> Result<(), ImportError> {
    let fail = |e: std::io::Error| ImportError::Output {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(fail)?;
    }
    std::fs::write(path, text).map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dependency_is_the_release_line_unless_a_checkout_is_named() {
        assert_eq!(release_line("0.1.0"), "0.1");
        assert_eq!(release_line("1.2.3-rc.1"), "1.2");
        let published = PiceliDep::from_flag(None);
        assert_eq!(published, PiceliDep::Version("0.1".into()));
        assert!(cargo_toml("shop", &published, &[]).contains("\npiceli = \"0.1\"\n"));
        assert!(
            cargo_toml("op", &published, &["operator"])
                .contains("\npiceli = { version = \"0.1\", features = [\"operator\"] }\n")
        );
        let checkout = PiceliDep::from_flag(Some(Path::new("/no/such/checkout")));
        assert!(
            cargo_toml("shop", &checkout, &[])
                .contains("piceli = { path = \"/no/such/checkout\" }"),
            "{}",
            cargo_toml("shop", &checkout, &[])
        );
        assert!(
            cargo_toml("op", &checkout, &["operator"])
                .contains("piceli = { path = \"/no/such/checkout\", features = [\"operator\"] }")
        );
    }

    #[test]
    fn only_an_operator_crate_gets_the_thin_lto_release_profile() {
        let published = PiceliDep::from_flag(None);
        let operator = cargo_toml("op", &published, &["operator"]);
        assert!(
            operator.contains("\n[profile.release]\nlto = \"thin\"\ncodegen-units = 4\n"),
            "{operator}"
        );
        assert_eq!(
            operator.matches("[profile.release]").count(),
            1,
            "{operator}"
        );
        let plain = cargo_toml("shop", &published, &[]);
        assert!(!plain.contains("[profile.release]"), "{plain}");
    }

    #[test]
    fn the_operator_skeleton_is_named_after_the_app() {
        let (main, greeting) = operator_sources("my-op");
        assert!(
            main.contains("app my-op;") && main.contains("my_op::main()"),
            "{main}"
        );
        assert!(main.contains("greetings.my-op.example.com"), "{main}");
        assert!(
            greeting.contains("group = \"my-op.example.com\""),
            "{greeting}"
        );
        assert!(!main.contains("__") && !greeting.contains("__"));
    }
}
