"""Periodic watch bookmarks as the official Kubernetes Python client receives them: a watch with
allow_watch_bookmarks=True on a quiet collection gets a BOOKMARK every interval carrying the current
resourceVersion (also after a change elsewhere in the cluster, which the watch itself does not see),
and a watch that did not ask for bookmarks gets no event at all.

Usage: python3 watch_bookmarks.py KUBECONFIG INTERVAL_SECONDS. Prints one line per bookmark, then
`bookmarks: N every ~X s` and `no bookmarks: 0 events`; exits non-zero (with the reason) on any failure,
including a missing `kubernetes` package (pip install kubernetes).
"""

import sys
import threading
import time

from kubernetes import client, config, watch


def collect(v1, ns, rv, seconds, bookmarks, out):
    """Watches ConfigMaps from rv for `seconds` (the server's timeoutSeconds), appending
    (seconds since start, type, resourceVersion) per event."""
    started = time.monotonic()
    w = watch.Watch()
    for event in w.stream(
        v1.list_namespaced_config_map,
        ns,
        resource_version=rv,
        allow_watch_bookmarks=bookmarks,
        timeout_seconds=seconds,
    ):
        raw = event.get("raw_object") or {}
        version = (raw.get("metadata") or {}).get("resourceVersion")
        out.append((time.monotonic() - started, event["type"], version))


def main(kubeconfig, interval):
    config.load_kube_config(config_file=kubeconfig, context="piceli-sim")
    v1 = client.CoreV1Api()
    ns = "default"
    v1.create_namespaced_config_map(ns, {"metadata": {"name": "quiet"}, "data": {"k": "1"}})
    rv = v1.list_namespaced_config_map(ns).metadata.resource_version

    # A watch lasting a little over four intervals (bookmarks at 1, 2, 3 intervals; the one due two
    # seconds before the timeout falls on one of them), and one that did not ask for bookmarks.
    seconds = int(4 * interval + 1.5)
    with_marks, without = [], []
    threads = [
        threading.Thread(target=collect, args=(v1, ns, rv, seconds, True, with_marks)),
        threading.Thread(target=collect, args=(v1, ns, rv, seconds, False, without)),
    ]
    for t in threads:
        t.start()

    # After the first bookmark, a change elsewhere (a Secret) moves the cluster's resourceVersion:
    # the ConfigMap watch does not see it, but its later bookmarks carry the new version.
    deadline = time.monotonic() + 3.5 * interval
    while not with_marks and time.monotonic() < deadline:
        time.sleep(0.02)
    assert with_marks, f"no bookmark within {3.5 * interval} s"
    secret = v1.create_namespaced_secret(ns, {"metadata": {"name": "elsewhere"}, "stringData": {"k": "v"}})
    moved = secret.metadata.resource_version
    current = v1.list_namespaced_config_map(ns).metadata.resource_version
    assert int(current) >= int(moved) > int(rv), f"versions: watched from {rv}, secret {moved}, now {current}"

    for t in threads:
        # Generous on a loaded machine: the server ends both watches at their timeout.
        t.join(seconds + 60)
        assert not t.is_alive(), "a watch did not end at its timeout"

    for at, kind, version in with_marks:
        print(f"{at:.2f} s: {kind} {version}")
    kinds = {kind for _, kind, _ in with_marks}
    assert kinds == {"BOOKMARK"}, f"events on a quiet collection: {with_marks!r}"
    assert len(with_marks) >= 3, f"{len(with_marks)} bookmarks in {seconds} s: {with_marks!r}"
    times = [at for at, _, _ in with_marks]
    # Each due an interval after the previous one (the client's clock sees them with some jitter).
    assert interval * 0.5 <= times[0] <= interval * 2.5, f"first bookmark after {times[0]:.2f} s"
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert all(interval * 0.5 <= g <= interval * 2 for g in gaps), f"gaps {gaps!r}"
    assert with_marks[0][2] == rv, f"the first bookmark carries {with_marks[0][2]}, not {rv}"
    assert with_marks[-1][2] == current, (
        f"the last bookmark carries {with_marks[-1][2]}, not the current version {current}"
    )
    print(f"bookmarks: {len(with_marks)} every ~{sum(gaps) / len(gaps):.2f} s, from {rv} to {current}")

    assert without == [], f"a watch without allowWatchBookmarks got {without!r}"
    print("no bookmarks: 0 events")


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]))
