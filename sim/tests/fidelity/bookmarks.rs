//! Periodic watch bookmarks, as kube-apiserver's watch cache sends them (every minute by default): a
//! watch that asked for them (`allowWatchBookmarks`) on a quiet collection gets one every interval
//! with the current resourceVersion, a watch that did not gets nothing. Driven by the official Python
//! client's `watch.Watch` (`watch_bookmarks.py`), with the interval shortened to a second through
//! `SimConfig::bookmark_interval` (`--bookmark-interval-ms`).

use std::time::Duration;

use piceli_sim::{Sim, SimConfig};

#[test]
fn the_official_python_client_gets_a_bookmark_every_interval_and_only_when_it_asked() {
    let sim = Sim::start(SimConfig {
        controllers: piceli_sim::ControllerConfig {
            enabled: false,
            ..Default::default()
        },
        bookmark_interval: Some(Duration::from_secs(1)),
        ..Default::default()
    })
    .expect("simulator starts");
    let stdout =
        crate::common::python_client(&sim, "watch_bookmarks.py", &["1"], "the bookmark watch");
    assert!(stdout.contains("bookmarks: "), "{stdout}");
    assert!(stdout.contains("no bookmarks: 0 events"), "{stdout}");
}
