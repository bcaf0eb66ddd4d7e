//! Which kinds the controller running on this thread declared it lists (its `table.rs` entry), so
//! debug builds can fail a list of a kind whose changes do not call for that controller (a
//! declaration out of step with the code would leave it blind to those changes).

use std::cell::Cell;

/// A running controller's name and the store keys it declared (`None`: it looks at any kind).
type Declared = Option<(&'static str, Option<&'static [&'static str]>)>;

thread_local! {
    /// The controller running on this thread.
    static RUNNING: Cell<Declared> = const { Cell::new(None) };
}

/// Notes the controller now running on this thread (`None` when its turn ends).
pub(crate) fn running(declared: Declared) {
    RUNNING.with(|r| r.set(declared));
}

/// In debug builds, fails when the running controller lists a kind it did not declare.
pub(crate) fn debug_check(rk: &str) {
    if cfg!(debug_assertions) {
        RUNNING.with(|r| {
            if let Some((name, Some(keys))) = r.get() {
                debug_assert!(
                    keys.contains(&rk),
                    "controller {name} lists {rk} but does not declare it among what it watches"
                );
            }
        });
    }
}
