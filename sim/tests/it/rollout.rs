//! `kubectl rollout undo` as on a real cluster: the earlier revision's ReplicaSet is reused (its
//! template, sent back by kubectl with `creationTimestamp: null`, hashes and compares as the
//! Deployment's), so the history reads 2, 3 and no third ReplicaSet appears.

use crate::common;

use common::{Kubectl, eventually, items};

#[test]
fn kubectl_rollout_undo_reuses_the_earlier_replica_set() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    k.ok(&["create", "deployment", "web", "--image=nginx:1.27"]);
    k.ok(&["rollout", "status", "deploy/web", "--timeout=30s"]);
    let first = items(&k, "rs");
    assert_eq!(first.len(), 1);
    let first_name = first[0]["metadata"]["name"]
        .as_str()
        .expect("name")
        .to_string();
    k.ok(&["set", "image", "deploy/web", "nginx=nginx:1.28"]);
    k.ok(&["rollout", "status", "deploy/web", "--timeout=30s"]);
    k.ok(&["rollout", "undo", "deploy/web"]);
    k.ok(&["rollout", "status", "deploy/web", "--timeout=30s"]);
    let rss = eventually("the first ReplicaSet is current again", 10, || {
        let rss = items(&k, "rs");
        rss.iter()
            .any(|r| {
                r["metadata"]["name"] == first_name.as_str()
                    && r["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"
            })
            .then_some(rss)
    });
    assert_eq!(
        rss.len(),
        2,
        "no new ReplicaSet for the old template: {rss:?}"
    );
    let history = k.ok(&["rollout", "history", "deploy/web"]);
    let revisions: Vec<&str> = history
        .lines()
        .skip_while(|l| !l.starts_with("REVISION"))
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(revisions, ["2", "3"], "{history}");
}
