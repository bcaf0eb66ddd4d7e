//! The directory of a sim started without `--dir`: created under the system's temporary directory with
//! a random name, removed with everything in it when the sim is dropped.
//!
//! tempfile would do the same, but as a normal dependency its rustix/fastrand features would differ from
//! the app binaries' and make `cargo build -p APP` and `cargo build --workspace` rebuild each other; the
//! sim's tests still use it.

use std::path::{Path, PathBuf};

/// A private directory owned by one running sim.
#[derive(Debug)]
pub(crate) struct ScratchDir(PathBuf);

impl ScratchDir {
    /// Creates `$TMPDIR/piceli-sim-<16 hex digits>`, readable by its owner only.
    pub(crate) fn create() -> std::io::Result<Self> {
        let base = std::env::temp_dir();
        loop {
            let name: String = crate::registry::object::random::bytes::<8>()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            let path = base.join(format!("piceli-sim-{name}"));
            match make_private_dir(&path) {
                Ok(()) => return Ok(Self(path)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Where it is.
    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

fn make_private_dir(path: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(path)
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        // Best effort, as tempfile does: a sim dropped while a test still holds a file open here only
        // leaves the directory behind.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scratch_dir_is_private_and_gone_after_drop() {
        let d = ScratchDir::create().expect("scratch dir");
        let p = d.path().to_path_buf();
        std::fs::write(p.join("f"), "x").expect("write");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&p).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o700);
        }
        drop(d);
        assert!(!p.exists());
    }
}
