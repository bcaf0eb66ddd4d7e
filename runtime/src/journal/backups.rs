//! Backups of the objects a release replaces: before the delete half of a `replace` step, the live object
//! as it was (without status and server-managed metadata, secret values as keyed digests) is recorded
//! with the step, so what was replaced can be read back (`backups`) and a rollback knows what it restores.

use rusqlite::params;
use rusqlite::types::Type;

use super::Journal;
use super::error::{JournalError, sql};
use super::time::now_rfc3339;
use super::types::ReleaseId;

/// The object a replace step deleted, as it was.
#[derive(Debug, Clone, PartialEq)]
pub struct Backup {
    /// The release.
    pub release: u64,
    /// The step's index in it.
    pub step: u32,
    /// The object's kind.
    pub kind: String,
    /// Its namespace.
    pub namespace: Option<String>,
    /// Its name.
    pub name: String,
    /// The uid of the object deleted.
    pub uid: String,
    /// The object (no status, no server-managed metadata, secret values as digests).
    pub object: serde_json::Value,
    /// When it was taken (RFC 3339).
    pub taken_at: String,
}

impl Journal {
    /// Records the backup of step `step` of `release` before its delete. A backup already recorded for the
    /// step (by the run a kill interrupted) is kept: it is the object as it was before anything was written.
    /// `object` must already have its secret values replaced by digests.
    #[allow(clippy::too_many_arguments)]
    pub fn record_backup(
        &self,
        release: ReleaseId,
        step: u32,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
        uid: &str,
        object: &serde_json::Value,
    ) -> Result<(), JournalError> {
        let json = object.to_string();
        self.write("recording a backup", |tx| {
            tx.execute(
                "INSERT OR IGNORE INTO backups (release, idx, kind, namespace, name, uid, object_json, \
                 taken_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![release.0, step, kind, namespace, name, uid, json, now_rfc3339()],
            )?;
            Ok(Ok(()))
        })
    }

    /// The backups of a release, in step order (`None`: every release's, oldest first). A row whose object
    /// is not JSON is [`JournalError::Corrupt`].
    pub fn backups(&self, release: Option<ReleaseId>) -> Result<Vec<Backup>, JournalError> {
        let conn = self.conn();
        let action = "reading backups";
        let mut stmt = conn
            .prepare(
                "SELECT release, idx, kind, namespace, name, uid, object_json, taken_at FROM backups \
                 WHERE ?1 IS NULL OR release = ?1 ORDER BY release, idx",
            )
            .map_err(sql(action))?;
        let rows = stmt
            .query_map([release.map(|r| r.0)], |r| {
                let json: String = r.get(6)?;
                // An object that does not parse is a damaged row, never an empty backup.
                let object = serde_json::from_str(&json).map_err(|e| {
                    rusqlite::Error::FromSqlConversionFailure(6, Type::Text, Box::new(e))
                })?;
                Ok(Backup {
                    release: r.get(0)?,
                    step: r.get(1)?,
                    kind: r.get(2)?,
                    namespace: r.get(3)?,
                    name: r.get(4)?,
                    uid: r.get(5)?,
                    object,
                    taken_at: r.get(7)?,
                })
            })
            .map_err(sql(action))?;
        rows.collect::<Result<_, _>>().map_err(sql(action))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::{PlannedStep, ReleaseKind};
    use serde_json::json;

    #[test]
    fn a_backup_is_kept_once_per_step_and_read_back() {
        let dir = tempfile::tempdir().expect("dir");
        let j = Journal::open(dir.path()).expect("journal");
        j.save_plan("h", "local", "{}").expect("plan");
        let step = PlannedStep {
            object: crate::identity::ObjectKey::new("StatefulSet", Some("n"), "db"),
            action: "replace".into(),
            level: 5,
            desired_digest: None,
        };
        let release = j
            .begin_release("h", ReleaseKind::Apply, &[step])
            .expect("release");
        let old = json!({"kind": "StatefulSet", "spec": {"serviceName": "db"}});
        j.record_backup(release, 0, "StatefulSet", Some("n"), "db", "u1", &old)
            .expect("backup");
        // A resumed run records again (the object is gone or is the new one): the first backup stays.
        let newer = json!({"kind": "StatefulSet", "spec": {"serviceName": "other"}});
        j.record_backup(release, 0, "StatefulSet", Some("n"), "db", "u2", &newer)
            .expect("again");
        let all = j.backups(Some(release)).expect("read");
        assert_eq!(all.len(), 1);
        assert_eq!((all[0].uid.as_str(), &all[0].object), ("u1", &old));
        assert_eq!(j.backups(None).expect("all").len(), 1);
        assert!(j.backups(Some(ReleaseId(9))).expect("none").is_empty());
    }
}
