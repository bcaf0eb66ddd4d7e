//! What `deploy` records of the images it builds: each run's images with their source identity (what the
//! run delivers, read back by `deploy --resume`), and the index of the state directory's build cache.

use rusqlite::{OptionalExtension, params};

use super::Journal;
use super::error::{JournalError, sql};
use super::time::now_rfc3339;
use super::types::DeployImage;

impl Journal {
    /// Records the images of deploy run `run` (replacing any recorded before), in one transaction.
    pub fn record_deploy_images(
        &self,
        run: u64,
        images: &[DeployImage],
    ) -> Result<(), JournalError> {
        self.write("recording a deploy run's images", |tx| {
            tx.execute("DELETE FROM deploy_images WHERE run = ?1", [run])?;
            let mut insert = tx.prepare(
                "INSERT INTO deploy_images (run, idx, image, reference, destination, inputs, git_commit, \
                 dirty, toolchain, unchanged) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?;
            for (idx, i) in images.iter().enumerate() {
                insert.execute(params![
                    run,
                    idx as u64,
                    i.image,
                    i.reference,
                    i.destination,
                    i.inputs,
                    i.commit,
                    i.dirty,
                    i.toolchain,
                    i.unchanged,
                ])?;
            }
            Ok(Ok(()))
        })
    }

    /// The images recorded for deploy run `run`, in the app's order.
    pub fn deploy_images(&self, run: u64) -> Result<Vec<DeployImage>, JournalError> {
        let conn = self.conn();
        let action = "reading a deploy run's images";
        let mut stmt = conn
            .prepare(
                "SELECT image, reference, destination, inputs, git_commit, dirty, toolchain, unchanged \
                 FROM deploy_images WHERE run = ?1 ORDER BY idx",
            )
            .map_err(sql(action))?;
        let rows = stmt
            .query_map([run], |r| {
                Ok(DeployImage {
                    image: r.get(0)?,
                    reference: r.get(1)?,
                    destination: r.get(2)?,
                    inputs: r.get(3)?,
                    commit: r.get(4)?,
                    dirty: r.get(5)?,
                    toolchain: r.get(6)?,
                    unchanged: r.get(7)?,
                })
            })
            .map_err(sql(action))?;
        rows.collect::<Result<_, _>>().map_err(sql(action))
    }

    /// Records that `image` built from `inputs` is the manifest `digest` in the build cache.
    pub fn record_build(
        &self,
        image: &str,
        inputs: &str,
        digest: &str,
    ) -> Result<(), JournalError> {
        self.write("recording a build", |tx| {
            tx.execute(
                "INSERT OR REPLACE INTO image_builds (image, inputs, digest, built_at) \
                 VALUES (?1, ?2, ?3, ?4)",
                params![image, inputs, digest, now_rfc3339()],
            )?;
            Ok(Ok(()))
        })
    }

    /// Drops the build index's rows whose digest is not in `keep` (after the build cache dropped those
    /// images); returns how many.
    pub fn retain_builds(&self, keep: &[String]) -> Result<usize, JournalError> {
        self.write("garbage-collecting the build index", |tx| {
            let digests: Vec<String> = {
                let mut stmt = tx.prepare("SELECT DISTINCT digest FROM image_builds")?;
                let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
                rows.collect::<Result<_, _>>()?
            };
            let mut dropped = 0;
            for d in digests.iter().filter(|d| !keep.contains(d)) {
                dropped += tx.execute("DELETE FROM image_builds WHERE digest = ?1", [d])?;
            }
            Ok(Ok(dropped))
        })
    }

    /// The manifest digest the build cache holds for `image` built from `inputs`, if any.
    pub fn built(&self, image: &str, inputs: &str) -> Result<Option<String>, JournalError> {
        self.conn()
            .query_row(
                "SELECT digest FROM image_builds WHERE image = ?1 AND inputs = ?2",
                [image, inputs],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql("reading the build cache"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runs_images_and_the_build_index_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open(dir.path()).unwrap();
        j.save_plan("h1", "local", "{}").unwrap();
        let run = j
            .begin_deploy(
                "h1",
                crate::journal::ApprovalKind::Approved,
                "deploy --approve h1",
            )
            .unwrap();
        let image = DeployImage {
            image: "build:api".into(),
            reference: "127.0.0.1:5000/x/api@sha256:00".into(),
            destination: "127.0.0.1:5000/x/api".into(),
            inputs: "sha256:11".into(),
            commit: None,
            dirty: true,
            toolchain: "rustc 1.95.0".into(),
            unchanged: false,
        };
        j.record_deploy_images(run, std::slice::from_ref(&image))
            .unwrap();
        j.record_deploy_images(run, std::slice::from_ref(&image))
            .unwrap();
        assert_eq!(j.deploy_images(run).unwrap(), [image]);
        assert_eq!(j.built("build:api", "sha256:11").unwrap(), None);
        j.record_build("build:api", "sha256:11", "sha256:22")
            .unwrap();
        assert_eq!(
            j.built("build:api", "sha256:11").unwrap().as_deref(),
            Some("sha256:22")
        );
    }
}
