//! The state directory's secret-bearing files are private (`0600`) whatever the umask and the
//! directory's mode: the journal (and SQLite's `-wal`/`-shm` beside it) and the secret digest key.
//!
//! The umask is process-wide, so the test runs itself again as a child under `sh -c 'umask 0; exec …'`
//! (no unsafe `umask(2)` call in this process).

#![cfg(unix)]

use piceli_runtime::engine::secrets::digest_key;
use piceli_runtime::journal::{DB_FILE, Journal};
use std::os::unix::fs::PermissionsExt;

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

/// Set in the child that runs the checks with umask 0.
const CHILD: &str = "PICELI_PRIVATE_FILES_CHILD";

#[test]
fn journal_and_key_are_0600_with_umask_0_in_a_0777_directory() {
    if std::env::var_os(CHILD).is_none() {
        let exe = std::env::current_exe().expect("test binary");
        let out = std::process::Command::new("sh")
            .args(["-c", "umask 0 && exec \"$0\" \"$@\""])
            .arg(exe)
            .args([
                "--exact",
                "private_files::journal_and_key_are_0600_with_umask_0_in_a_0777_directory",
                "--nocapture",
            ])
            .env(CHILD, "1")
            .output()
            .expect("run the child");
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "child failed:\n{text}");
        assert!(text.contains("1 passed"), "the child ran no test:\n{text}");
        return;
    }
    let umask = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:").map(|v| v.trim().to_string()))
        });
    assert_eq!(
        umask.as_deref(),
        Some("0000"),
        "the child runs with umask 0"
    );
    let tmp = tempfile::tempdir().expect("temp dir");
    let state = tmp.path().join("state");
    std::fs::create_dir(&state).expect("mkdir");
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o777)).expect("chmod");

    let journal = Journal::open(&state).expect("open");
    journal.save_plan("h", "local", "{}").expect("write");
    for file in [DB_FILE, "journal.db-wal", "journal.db-shm"] {
        assert_eq!(mode(&state.join(file)), 0o600, "{file}");
    }
    let key = digest_key(&state).expect("key");
    assert_eq!(mode(&state.join("secret-digest.key")), 0o600);
    assert_eq!(digest_key(&state).expect("key again"), key);
    // A state directory created by the journal itself is private too.
    let nested = tmp.path().join("new/state");
    drop(Journal::open(&nested).expect("open nested"));
    assert_eq!(mode(&nested), 0o700);
    assert_eq!(mode(&nested.join(DB_FILE)), 0o600);
}
