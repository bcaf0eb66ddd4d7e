//! A state directory's journal as someone edited it (issue 34): the input becomes rows of the journal's
//! tables (`journal_rows/input.rs`), written into a `journal.db` the engine's own schema creation made, as
//! the `sqlite3` shell would. Then every reader `resume`, `status`, `history`, `rollback` and `deploy
//! --resume` use runs on it: none may panic, each error must be coded (a row piceli never writes is a
//! damaged journal, PCL0150), what two readers say of one row must agree, reading loses no row, and a
//! backup reads back as the JSON its row holds. Last,
//! the engine's writers record values taken from the input in a fresh journal, and every record must read
//! back equal (`journal_rows/round_trip.rs`).
//!
//! `PICELI_FUZZ_DUMP_SEEDS=DIR` makes the target write its seed corpus (journals written by the engine's
//! writers, `journal_rows/seeds.rs`) into DIR first.
#![no_main]

#[path = "journal_rows/input.rs"]
mod input;
#[path = "journal_rows/round_trip.rs"]
mod round_trip;
#[path = "journal_rows/seeds.rs"]
mod seeds;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use piceli_runtime::Coded;
use piceli_runtime::engine::state::StateDir;
use piceli_runtime::images::gc;
use piceli_runtime::journal::{
    APPROVAL_KEY_ENV, DB_FILE, DeployState, JournalError, ReleaseKind, ReleaseState, approval_of,
};
use piceli_runtime::status::checks;

/// What every run of this process shares: where its state directories go, the journal file the engine's
/// schema creation made (copied for each input), and its tables.
pub struct Setup {
    pub base: PathBuf,
    pub template: Vec<u8>,
    pub tables: Vec<input::Table>,
}

fn setup() -> &'static Setup {
    static SETUP: OnceLock<Setup> = OnceLock::new();
    SETUP.get_or_init(|| {
        let shm = Path::new("/dev/shm");
        let root = if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        // Earlier runs' scratch directories (libFuzzer exits without cleaning up): those of processes gone.
        let procfs = Path::new("/proc/self").exists();
        for entry in std::fs::read_dir(&root).into_iter().flatten().flatten() {
            let name = entry.file_name();
            let pid = name
                .to_str()
                .and_then(|n| n.strip_prefix("piceli-fuzz-journal-"));
            if procfs && pid.is_some_and(|pid| !Path::new("/proc").join(pid).exists()) {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
        let base = root.join(format!("piceli-fuzz-journal-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).expect("a scratch directory");
        // The approval key every journal of this process seals and checks approvals with.
        let key = base.join("approval.key");
        std::fs::write(&key, format!("{}\n", "5a".repeat(32))).expect("an approval key");
        // SAFETY: set once, before this process reads the environment from any other thread (libFuzzer
        // runs the target on one thread; nothing else has started).
        unsafe { std::env::set_var(APPROVAL_KEY_ENV, &key) };
        let dir = base.join("template");
        drop(StateDir::open(dir.clone()).expect("a new state directory"));
        let db = dir.join(DB_FILE);
        let template = std::fs::read(&db).expect("the new journal reads");
        let conn = rusqlite::Connection::open(&db).expect("the new journal opens");
        let tables = input::tables(&conn);
        drop(conn);
        let setup = Setup {
            base,
            template,
            tables,
        };
        if let Some(out) = std::env::var_os("PICELI_FUZZ_DUMP_SEEDS") {
            seeds::write(&setup, Path::new(&out));
        }
        setup
    })
}

/// A fresh state directory `name` holding a copy of the engine's new journal.
pub fn fresh(setup: &Setup, name: &str) -> PathBuf {
    let dir = setup.base.join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a state directory");
    std::fs::write(dir.join(DB_FILE), &setup.template).expect("a journal file");
    dir
}

/// A journal error of a reader on an edited journal: a damaged journal (PCL0150), with a message.
fn damaged(e: &JournalError) {
    assert_eq!(e.code().as_str(), "PCL0150", "not reported as damage: {e}");
    assert!(!e.to_string().is_empty() && !e.help().is_empty());
}

/// Any error: a PCL code and a message.
pub fn coded(e: &dyn Coded) {
    assert!(e.code().as_str().starts_with("PCL"), "{e}");
    assert!(!e.to_string().is_empty() && !e.help().is_empty(), "{e}");
}

/// Runs every reader of the journal on `state`; returns how many failed (each error checked).
pub fn read_all(state: &StateDir) -> usize {
    let j = &state.journal;
    let mut failed = 0;
    let mut ok = |r: Result<(), JournalError>| {
        if let Err(e) = r {
            damaged(&e);
            failed += 1;
        }
    };
    let releases = j.releases();
    let approvals = j.approvals();
    let unfinished = j.unfinished();
    let succeeded = j.last_succeeded();
    ok(j.next_release_number().map(drop));
    ok(j.stop_requested().map(drop));
    if let (Ok(all), Ok(one)) = (&releases, &unfinished) {
        let first = all.iter().find(|r| r.state == ReleaseState::Running);
        assert_eq!(
            one.as_ref(),
            first,
            "unfinished() disagrees with releases()"
        );
    }
    if let (Ok(all), Ok(one)) = (&releases, &succeeded) {
        let first = all.iter().find(|r| r.state == ReleaseState::Succeeded);
        assert_eq!(
            one.as_ref(),
            first,
            "last_succeeded() disagrees with releases()"
        );
    }
    for release in releases
        .as_ref()
        .map_or(&[][..], |r| &r[..])
        .iter()
        .take(16)
    {
        match j.release(release.id) {
            Ok(one) => assert_eq!(one.as_ref(), Some(release), "release() disagrees"),
            Err(e) => damaged(&e),
        }
        ok(j.steps(release.id).map(drop));
        ok(j.backups(Some(release.id)).map(drop));
        ok(j.approval(&release.plan_hash, None).map(drop));
        if let Ok(approvals) = &approvals {
            let _ = approval_of(approvals, release);
        }
        match state.stored_plan(&release.plan_hash) {
            Ok(plan) => assert_eq!(plan.hash, release.plan_hash),
            Err(e) => coded(&e),
        }
        if let Some(prefix) = release.plan_hash.get(..12) {
            match state.resolve_hash(prefix) {
                Ok(hash) => assert!(hash.starts_with(&prefix.to_ascii_lowercase()), "{hash}"),
                Err(e) => coded(&e),
            }
        }
    }
    ok(releases.map(drop));
    ok(unfinished.map(drop));
    ok(succeeded.map(drop));
    ok(approvals.map(drop));
    let runs = j.deploy_runs();
    match (&runs, j.unfinished_deploy()) {
        (Ok(all), Ok(one)) => {
            let first = all.iter().find(|r| r.state == DeployState::Running);
            assert_eq!(
                one.as_ref(),
                first,
                "unfinished_deploy() disagrees with deploy_runs()"
            );
        }
        (_, Err(e)) => damaged(&e),
        _ => {}
    }
    for run in runs.as_ref().map_or(&[][..], |r| &r[..]).iter().take(16) {
        ok(j.deploy_images(run.id).map(drop));
        ok(j.approval(&run.plan_hash, Some(run.id)).map(drop));
    }
    ok(runs.map(drop));
    let last = j.last_check_results();
    if let Ok(last) = &last {
        assert_eq!(&checks::last_check_results(j), last);
    }
    ok(last.map(drop));
    ok(j.check_outcomes().map(drop));
    ok(j.backups(None).map(drop));
    ok(gc::referenced(j).map(drop));
    ok(j.plan_hashes_starting_with("", 10).map(drop));
    failed
}

/// The number of rows of each table (what reading must never change).
fn counts(db: &Path, tables: &[input::Table]) -> Vec<i64> {
    let conn = rusqlite::Connection::open(db).expect("the journal file opens");
    tables
        .iter()
        .map(|t| {
            conn.query_row(&format!("SELECT COUNT(*) FROM \"{}\"", t.name), [], |r| {
                r.get(0)
            })
            .expect("a count")
        })
        .collect()
}

/// The backups as read against the rows stored (`db`): each object is its row's JSON, never a stand-in
/// for a row that is not JSON (that must be an error).
fn backups_lose_nothing(state: &StateDir, db: &Path) {
    let Ok(backups) = state.journal.backups(None) else {
        return;
    };
    let conn = rusqlite::Connection::open(db).expect("the journal file opens");
    let mut stmt = conn
        .prepare("SELECT object_json FROM backups ORDER BY release, idx")
        .expect("backups read");
    let stored: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .expect("backups read")
        .collect::<Result<_, _>>()
        .expect("backups that read as records read as text");
    assert_eq!(stored.len(), backups.len(), "a backup was dropped");
    for (text, backup) in stored.iter().zip(&backups) {
        let object: Result<serde_json::Value, _> = serde_json::from_str(text);
        assert!(
            object.as_ref().is_ok_and(|o| *o == backup.object),
            "a backup read as {} from {text}",
            backup.object
        );
    }
}

/// What a run does next on the edited journal (a new apply supersedes the running release, begins its own,
/// asks for a stop): each write works or is refused with a code, and what it wrote reads back.
fn write_after(state: &StateDir) {
    let j = &state.journal;
    if let Ok(Some(running)) = j.unfinished()
        && let Err(e) = j.finish_release(running.id, ReleaseState::Superseded)
    {
        coded(&e);
    }
    let plan = j
        .releases()
        .ok()
        .and_then(|r| r.first().map(|r| r.plan_hash.clone()));
    let plan = plan.unwrap_or_else(|| "0".repeat(64));
    match j.begin_release(&plan, ReleaseKind::Apply, &[]) {
        Ok(id) => match j.release(id) {
            Ok(Some(r)) => assert_eq!(
                (r.state, r.plan_hash.as_str()),
                (ReleaseState::Running, &*plan)
            ),
            Ok(None) => panic!("release {id} was begun and is not there"),
            Err(e) => damaged(&e),
        },
        Err(e) => coded(&e),
    }
    match j.request_stop().and_then(|()| j.stop_requested()) {
        Ok(stop) => assert!(stop, "a stop request was lost"),
        Err(e) => coded(&e),
    }
}

fuzz_target!(|data: &[u8]| {
    let setup = setup();
    let text = String::from_utf8_lossy(data);
    let rows = input::parse(&text, &setup.tables);
    let dir = fresh(setup, "edited");
    let db = dir.join(DB_FILE);
    input::write(&db, &rows, &setup.tables);
    let before = counts(&db, &setup.tables);
    match StateDir::open(dir.clone()) {
        Ok(state) => {
            read_all(&state);
            backups_lose_nothing(&state, &db);
            drop(state);
            assert_eq!(
                counts(&db, &setup.tables),
                before,
                "reading the journal changed its rows"
            );
            let state = StateDir::open(dir).expect("the journal opened a moment ago");
            write_after(&state);
        }
        Err(e) => coded(&e),
    }
    round_trip::run(setup, &rows);
});
