//! Timestamps as kube-apiserver stores them: a `metav1.Time` from a client comes back in UTC with
//! whole seconds, a `metav1.MicroTime` with six fraction digits.

use crate::common::{self, Kubectl, json_of};

#[test]
fn kubectl_timestamps_come_back_as_the_apiserver_encodes_them() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let event = k.file(
        "event.yaml",
        r#"apiVersion: v1
kind: Event
metadata: {name: e1, namespace: default}
involvedObject: {kind: Pod, name: p, namespace: default}
reason: Tested
message: timestamps
type: Normal
firstTimestamp: "2026-01-01T10:00:41.821675+00:00"
lastTimestamp: "2026-01-01T11:00:41+01:00"
eventTime: "2026-01-01T10:00:41.821675+00:00"
reportingComponent: test
reportingInstance: test-1
action: Testing
"#,
    );
    k.ok(&["create", "-f", &event]);
    let got = json_of(&k.ok(&["get", "event", "e1", "-o", "json"]));
    assert_eq!(got["firstTimestamp"], "2026-01-01T10:00:41Z", "{got}");
    assert_eq!(got["lastTimestamp"], "2026-01-01T10:00:41Z", "{got}");
    assert_eq!(got["eventTime"], "2026-01-01T10:00:41.821675Z", "{got}");
    let created = got["metadata"]["creationTimestamp"]
        .as_str()
        .expect("creationTimestamp");
    assert!(
        created.len() == 20 && created.ends_with('Z'),
        "RFC 3339 seconds: {created}"
    );
}
