//! The log lines tests add to simulated containers (`RunningSim::append_log`), kept in memory per
//! pod (by uid, so a new pod of the same name starts empty) and container instance (restart count,
//! so `previous=true` shows the lines of the instance before), with a change signal for followers.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::watch;

/// One added line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedLine {
    /// Nanoseconds since the Unix epoch.
    pub at: i128,
    /// Unique and increasing over every line of this simulator.
    pub seq: u64,
    /// The line's text, without the newline.
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    uid: String,
    container: String,
    instance: i64,
}

/// Added lines of every container of this process's simulator.
#[derive(Debug)]
pub struct LogBuffer {
    lines: Mutex<HashMap<Key, Vec<AddedLine>>>,
    changed: watch::Sender<u64>,
    seq: AtomicU64,
}

impl Default for LogBuffer {
    fn default() -> Self {
        LogBuffer {
            lines: Mutex::new(HashMap::new()),
            changed: watch::Sender::new(0),
            seq: AtomicU64::new(0),
        }
    }
}

/// Lines kept per container instance; older ones are dropped (as a kubelet rotates logs).
const MAX_LINES: usize = 10_000;

/// Now, in nanoseconds since the Unix epoch.
pub fn now_nanos() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0)
}

impl LogBuffer {
    /// Adds `text` (one line per `\n`-separated part) to a container instance of the pod `uid`.
    pub fn append(&self, uid: &str, container: &str, instance: i64, text: &str) {
        let at = now_nanos();
        if let Ok(mut map) = self.lines.lock() {
            let list = map
                .entry(Key {
                    uid: uid.to_string(),
                    container: container.to_string(),
                    instance,
                })
                .or_default();
            for part in text.strip_suffix('\n').unwrap_or(text).split('\n') {
                list.push(AddedLine {
                    at,
                    seq: self.seq.fetch_add(1, Ordering::Relaxed),
                    text: part.to_string(),
                });
            }
            if list.len() > MAX_LINES {
                let excess = list.len() - MAX_LINES;
                list.drain(..excess);
            }
        }
        self.changed.send_modify(|n| *n += 1);
    }

    /// The lines added to one container instance, oldest first.
    pub fn lines(&self, uid: &str, container: &str, instance: i64) -> Vec<AddedLine> {
        let key = Key {
            uid: uid.to_string(),
            container: container.to_string(),
            instance,
        };
        self.lines
            .lock()
            .ok()
            .and_then(|m| m.get(&key).cloned())
            .unwrap_or_default()
    }

    /// A receiver that wakes up whenever a line is added.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Forgets the lines of pods that no longer exist.
    pub fn retain_pods(&self, live: &std::collections::HashSet<&str>) {
        if let Ok(mut map) = self.lines.lock() {
            map.retain(|k, _| live.contains(k.uid.as_str()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_kept_per_pod_container_and_instance() {
        let buf = LogBuffer::default();
        let rx = buf.subscribe();
        buf.append("u1", "web", 0, "one\ntwo\n");
        buf.append("u1", "web", 1, "three");
        let texts = |v: Vec<AddedLine>| v.into_iter().map(|l| l.text).collect::<Vec<_>>();
        assert_eq!(texts(buf.lines("u1", "web", 0)), vec!["one", "two"]);
        assert_eq!(texts(buf.lines("u1", "web", 1)), vec!["three"]);
        assert!(buf.lines("u2", "web", 0).is_empty());
        assert!(rx.has_changed().unwrap_or(false));
        buf.retain_pods(&std::collections::HashSet::new());
        assert!(buf.lines("u1", "web", 0).is_empty());
    }
}
