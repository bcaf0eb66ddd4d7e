//! A stored plan as a tampered state directory holds it: the JSON goes through `Plan::from_stored` (the
//! read `StateDir::stored_plan` does: parse, its own hash, the content hash). A forger can recompute the
//! (unkeyed) content hash, so a plan that parses is also re-hashed, stored as the engine writes it and
//! read back: it must read back equal, and the engine's pure uses of a plan must not panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use piceli_runtime::Coded;
use piceli_runtime::engine::hash::digest;
use piceli_runtime::identity::ObjectKey;
use piceli_runtime::engine::plan::{Plan, level};

fuzz_target!(|data: &[u8]| {
    let Ok(json) = std::str::from_utf8(data) else {
        return;
    };
    // The row's hash: what the plan says it is (so the content check runs), else a fixed one.
    let said = serde_json::from_str::<serde_json::Value>(json)
        .ok()
        .and_then(|v| v.get("hash")?.as_str().map(String::from))
        .unwrap_or_else(|| "0".repeat(64));
    if let Err(e) = Plan::from_stored(&said, json) {
        let _ = (e.to_string(), e.code());
    }
    let Ok(mut plan) = serde_json::from_str::<Plan>(json) else {
        return;
    };
    plan.hash = plan.compute_hash();
    let stored = serde_json::to_string(&plan).expect("a plan encodes");
    let back = match Plan::from_stored(&plan.hash, &stored) {
        Ok(back) => back,
        Err(e) => panic!("a plan stored as written does not read back: {e}\n{stored}"),
    };
    assert_eq!(back, plan, "a stored plan reads back changed");
    // The streamed hash is the digest of the whole plan without `hash` (what older plans were hashed as).
    let mut whole = serde_json::to_value(&plan).expect("a plan encodes");
    if let Some(map) = whole.as_object_mut() {
        map.remove("hash");
    }
    assert_eq!(plan.hash, digest(&whole), "the streamed plan hash differs");
    let _ = plan.has_changes();
    for a in &plan.actions {
        let key = a.key().to_string();
        let _ = key.parse::<ObjectKey>();
        let _ = (a.changes(), level(&a.object.kind), a.action.as_str());
    }
});
