"""Admission latency one validating webhook adds to each write, on one cluster (sim-vs-real.sh runs it on both).

Usage: python3 admission_latency.py KUBECONFIG CONTEXT WEBHOOK_URL CA_PEM COUNT

Creates COUNT Deployments (replicas 0, so no pods) one after the other in a namespace with no webhook, then
COUNT in a namespace a ValidatingWebhookConfiguration (by `url:`, failurePolicy Fail) selects, with the
official Python client; prints one line: `admission: base p50 P ms p99 P ms, webhook p50 P ms p99 P ms,
added p50 P ms`. Every request has a timeout; the objects and the configuration are deleted at the end.
"""

import base64
import statistics
import sys
import time

from kubernetes import client, config


def deployment(name):
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]},
            },
        },
    }


def timed_creates(apps, namespace, count):
    took = []
    for i in range(count):
        started = time.perf_counter()
        apps.create_namespaced_deployment(namespace, deployment(f"d{i}"), _request_timeout=30)
        took.append((time.perf_counter() - started) * 1000.0)
    return took


def p(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main():
    kubeconfig, context, url, ca_pem, count = sys.argv[1:6]
    count = int(count)
    config.load_kube_config(config_file=kubeconfig, context=context)
    core = client.CoreV1Api()
    apps = client.AppsV1Api()
    admission = client.AdmissionregistrationV1Api()
    base_ns, hooked_ns = "adm-base", "adm-hooked"
    for ns, labels in ((base_ns, {}), (hooked_ns, {"admission-bench": "on"})):
        core.create_namespace({"metadata": {"name": ns, "labels": labels}}, _request_timeout=30)
    with open(ca_pem, "rb") as f:
        ca = base64.b64encode(f.read()).decode()
    admission.create_validating_webhook_configuration(
        {
            "metadata": {"name": "admission-bench"},
            "webhooks": [
                {
                    "name": "no-latest-tag.bench.piceli.dev",
                    "clientConfig": {"url": url, "caBundle": ca},
                    "rules": [
                        {
                            "apiGroups": ["apps"],
                            "apiVersions": ["v1"],
                            "resources": ["deployments"],
                            "operations": ["CREATE"],
                        }
                    ],
                    "namespaceSelector": {"matchLabels": {"admission-bench": "on"}},
                    "admissionReviewVersions": ["v1"],
                    "sideEffects": "None",
                    "failurePolicy": "Fail",
                    "timeoutSeconds": 10,
                }
            ],
        },
        _request_timeout=30,
    )
    # kube-apiserver picks a new configuration up from its informer: wait until a denied object is denied.
    deadline = time.time() + 30
    while True:
        try:
            bad = deployment("probe")
            bad["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:latest"
            apps.create_namespaced_deployment(hooked_ns, bad, _request_timeout=30)
            apps.delete_namespaced_deployment("probe", hooked_ns, _request_timeout=30)
        except client.exceptions.ApiException as e:
            if "denied the request" in str(e.body):
                break
        if time.time() > deadline:
            sys.exit("the webhook was never called")
        time.sleep(0.2)
    timed_creates(apps, base_ns, 20)  # warm-up: connections, caches
    for i in range(20):
        apps.delete_namespaced_deployment(f"d{i}", base_ns, _request_timeout=30)
    base = timed_creates(apps, base_ns, count)
    hooked = timed_creates(apps, hooked_ns, count)
    admission.delete_validating_webhook_configuration("admission-bench", _request_timeout=30)
    for ns in (base_ns, hooked_ns):
        core.delete_namespace(ns, _request_timeout=30)
    print(
        "admission: base p50 %.2f ms p99 %.2f ms, webhook p50 %.2f ms p99 %.2f ms, added p50 %.2f ms"
        % (
            p(base, 0.5),
            p(base, 0.99),
            p(hooked, 0.5),
            p(hooked, 0.99),
            statistics.median(hooked) - statistics.median(base),
        )
    )


if __name__ == "__main__":
    main()
