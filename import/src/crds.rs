//! Reading the CustomResourceDefinitions given to `import --crds PATH`: files or directories (their
//! `.yaml`/`.yml` files, in name order, not recursively, as `crds "DIR";` in `app!` reads them), each
//! parsed with `piceli_core::crd` as the macro parses it.

use crate::error::ImportError;
use piceli_core::crd::{self, Crd};
use std::path::{Path, PathBuf};

/// One CRD file: where it is and the CRDs it defines.
#[derive(Debug, Clone)]
pub struct CrdFile {
    /// The file, as found from the path given.
    pub path: PathBuf,
    /// Its text (copied as it is into a crate written with `--crate`).
    pub text: String,
    /// Its CustomResourceDefinitions.
    pub crds: Vec<Crd>,
}

/// Every CRD file of `paths` (files, or directories' `.yaml`/`.yml` files).
pub fn read(paths: &[PathBuf]) -> Result<Vec<CrdFile>, ImportError> {
    let mut out = Vec::new();
    for p in paths {
        for f in files(p)? {
            let text = std::fs::read_to_string(&f).map_err(|e| ImportError::Unreadable {
                path: f.display().to_string(),
                message: e.to_string(),
            })?;
            let crds = parse(&text, &f)?;
            out.push(CrdFile {
                path: f,
                text,
                crds,
            });
        }
    }
    Ok(out)
}

/// The CRDs of one file's text (`path` names it in errors).
pub fn parse(text: &str, path: &Path) -> Result<Vec<Crd>, ImportError> {
    crd::read(text, &path.display().to_string()).map_err(|e| ImportError::Malformed {
        origin: e.origin.clone(),
        message: format!("--crds: {}", e.message),
    })
}

fn files(path: &Path) -> Result<Vec<PathBuf>, ImportError> {
    let unreadable = |e: std::io::Error| ImportError::Unreadable {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    if !std::fs::metadata(path).map_err(unreadable)?.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(unreadable)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.extension()
                    .and_then(|x| x.to_str())
                    .is_some_and(|x| matches!(x, "yaml" | "yml"))
        })
        .collect();
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vendored() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/crds")
    }

    #[test]
    fn a_directory_gives_its_yaml_files_in_name_order() {
        let files = read(&[vendored()]).expect("the vendored CRDs read");
        let kinds: Vec<&str> = files
            .iter()
            .flat_map(|f| f.crds.iter().map(|c| c.kind.as_str()))
            .collect();
        assert_eq!(
            kinds,
            [
                "Certificate",
                "GatewayClass",
                "Gateway",
                "GRPCRoute",
                "HTTPRoute",
                "PodMonitor",
                "ServiceMonitor"
            ]
        );
    }

    #[test]
    fn a_file_that_is_no_crd_is_malformed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let f = dir.path().join("x.yaml");
        std::fs::write(&f, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
            .expect("write");
        let err = read(&[f]).err();
        assert!(
            matches!(err, Some(ImportError::Malformed { ref message, .. }) if message.contains("CustomResourceDefinition")),
            "{err:?}"
        );
        let err = read(&[dir.path().join("missing")]).err();
        assert!(matches!(err, Some(ImportError::Unreadable { .. })));
    }
}
