//! Whether a process recorded in a pid file still runs: it exists in `/proc` and is not a zombie
//! (`Z`) or dead (`X`) — a killed server whose parent has not reaped it yet no longer serves.

/// Whether `pid` is a live process on this machine.
pub fn alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // `pid (comm) S ...`: the state follows the last ')' (comm may contain spaces and parentheses).
    let state = stat
        .rfind(')')
        .and_then(|i| stat[i + 1..].split_whitespace().next())
        .unwrap_or("");
    !matches!(state, "Z" | "X" | "x")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_reaped_one_is_not() {
        assert!(alive(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().expect("true");
        let pid = child.id();
        child.wait().expect("wait");
        assert!(!alive(pid));
    }

    #[test]
    fn an_unreaped_dead_child_is_not_alive() {
        let child = std::process::Command::new("true").spawn().expect("true");
        let pid = child.id();
        // Not waited for: it stays a zombie until this test ends.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while alive(pid) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(
            std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "still a zombie"
        );
        assert!(!alive(pid));
        drop(child);
    }
}
