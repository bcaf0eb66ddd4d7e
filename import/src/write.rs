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
    /// The checkout this binary was built from, when it is still there; otherwise this version.
    pub fn default_for_this_build() -> PiceliDep {
        let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        match here.canonicalize() {
            Ok(p) if p.join("macros").is_dir() && p.join("Cargo.toml").is_file() => {
                PiceliDep::Path(p)
            }
            _ => PiceliDep::Version(env!("CARGO_PKG_VERSION").to_string()),
        }
    }

    fn toml(&self) -> String {
        match self {
            PiceliDep::Path(p) => format!("piceli = {{ path = {:?} }}", p.display().to_string()),
            PiceliDep::Version(v) => format!("piceli = {v:?}"),
        }
    }
}

/// The dev profile of generated crates (docs/new.md explains and measures it): dependencies without
/// debug info and lightly optimised (half the code for the linker, which is most of a rebuild), line
/// tables for the app (backtraces keep file:line), and an optimised proc-macro so `app!` expands quickly.
pub const DEV_PROFILE: &str = "\
# Fast edit -> build -> render (see Piceli's docs/new.md): dependencies without debug info and lightly
# optimised (less code to link), the app with line tables only (backtraces keep file:line), the app!
# macro and build scripts optimised.
[profile.dev]
debug = \"line-tables-only\"

[profile.dev.package.\"*\"]
debug = false
opt-level = 1

[profile.dev.build-override]
opt-level = 3
";

/// `Cargo.toml` of an app crate named `name`.
pub fn cargo_toml(name: &str, dep: &PiceliDep) -> String {
    format!(
        "[package]\nname = {name:?}\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\n{}\n\n{DEV_PROFILE}\n\
         # A crate of its own, also when it sits inside another workspace's directory.\n[workspace]\n",
        dep.toml()
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

/// Write a new crate at `dir` (created; refused when it already has a `Cargo.toml`).
pub fn write_crate(
    dir: &Path,
    name: &str,
    dep: &PiceliDep,
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
        (dir.join("Cargo.toml"), cargo_toml(name, dep)),
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
