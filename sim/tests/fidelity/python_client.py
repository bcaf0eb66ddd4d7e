"""Drives piceli-sim with the official Kubernetes Python client, which spells booleans `True`:
watch=True, allowWatchBookmarks=True, sendInitialEvents=True and force=True must all mean true.

Usage: python3 python_client.py KUBECONFIG. Exits non-zero (with the reason) on any failure,
including a missing `kubernetes` package (pip install kubernetes).
"""

import sys

from kubernetes import client, config, dynamic, watch
from kubernetes.client.rest import ApiException


def main(kubeconfig):
    config.load_kube_config(config_file=kubeconfig, context="piceli-sim")
    v1 = client.CoreV1Api()
    ns = "default"
    v1.create_namespaced_config_map(ns, {"metadata": {"name": "a"}, "data": {"k": "1"}})

    # watch=True: a watch stream, not a List.
    w = watch.Watch()
    seen = None
    for event in w.stream(v1.list_namespaced_config_map, ns, timeout_seconds=10):
        seen = (event["type"], event["object"].metadata.name)
        w.stop()
    assert seen == ("ADDED", "a"), f"watch=True gave {seen!r}"
    print("watch=True: ADDED a")

    # sendInitialEvents=True with allowWatchBookmarks=True: the initial-events-end bookmark.
    w = watch.Watch()
    types = []
    for event in w.stream(
        v1.list_namespaced_config_map,
        ns,
        allow_watch_bookmarks=True,
        send_initial_events=True,
        resource_version_match="NotOlderThan",
        timeout_seconds=10,
    ):
        types.append(event["type"])
        raw = event.get("raw_object") or {}
        notes = (raw.get("metadata") or {}).get("annotations") or {}
        if event["type"] == "BOOKMARK" and notes.get("k8s.io/initial-events-end") == "true":
            w.stop()
    assert types[:1] == ["ADDED"] and types[-1] == "BOOKMARK", f"events {types!r}"
    print("sendInitialEvents=True, allowWatchBookmarks=True: initial-events-end bookmark")

    # force=True (the dynamic client's server_side_apply with force_conflicts): a conflict is forced.
    cms = dynamic.DynamicClient(client.ApiClient()).resources.get(api_version="v1", kind="ConfigMap")
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}, "data": {"k": "1"}}
    cms.server_side_apply(body=body, namespace=ns, field_manager="other")
    body["data"]["k"] = "2"
    try:
        cms.server_side_apply(body=body, namespace=ns, field_manager="python")
        raise AssertionError("the unforced apply should conflict")
    except ApiException as e:
        assert e.status == 409, f"unforced apply: {e.status} {e.body}"
    got = cms.server_side_apply(body=body, namespace=ns, field_manager="python", force_conflicts=True)
    assert got.data["k"] == "2", got.data
    print("force=True: conflict forced")


if __name__ == "__main__":
    main(sys.argv[1])
