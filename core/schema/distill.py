#!/usr/bin/env python3
"""Distill the Kubernetes 1.33 JSON schema to the types the `app!` blocks check.

Reads `_definitions.json` (see SOURCE.md) and writes `k8s-1.33.json`: the `$defs` entries reachable from
the block roots below, copied verbatim (descriptions included: the table generator reads enum values from
them). Run: python3 core/schema/distill.py /path/to/v1.33/_definitions.json core/schema/k8s-1.33.json
Then regenerate the Rust table: PICELI_UPDATE_DOCS=1 cargo test -p piceli-core schema_table_is_current
"""
import json
import sys

ROOTS = [
    "io.k8s.api.core.v1.PodSpec",
    "io.k8s.api.core.v1.Container",
    "io.k8s.api.apps.v1.DeploymentSpec",
    "io.k8s.api.apps.v1.StatefulSetSpec",
    "io.k8s.api.apps.v1.DaemonSetSpec",
    "io.k8s.api.batch.v1.JobSpec",
    "io.k8s.api.batch.v1.CronJobSpec",
    "io.k8s.api.core.v1.ServiceSpec",
    "io.k8s.api.networking.v1.IngressSpec",
    "io.k8s.api.core.v1.PersistentVolumeClaimSpec",
    "io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerSpec",
    "io.k8s.api.policy.v1.PodDisruptionBudgetSpec",
    "io.k8s.api.networking.v1.NetworkPolicySpec",
    "io.k8s.api.core.v1.ServiceAccount",
]


def refs(node, out):
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            out.append(ref.rsplit("/", 1)[-1])
        for v in node.values():
            refs(v, out)
    elif isinstance(node, list):
        for v in node:
            refs(v, out)


def main():
    source, target = sys.argv[1], sys.argv[2]
    defs = json.load(open(source))["$defs"]
    keep, todo = {}, list(ROOTS)
    while todo:
        name = todo.pop()
        if name in keep:
            continue
        keep[name] = defs[name]
        found = []
        refs(defs[name], found)
        todo.extend(found)
    out = {"roots": ROOTS, "$defs": dict(sorted(keep.items()))}
    with open(target, "w") as f:
        json.dump(out, f, indent=1, sort_keys=False)
        f.write("\n")
    print(f"{len(keep)} types")


if __name__ == "__main__":
    main()
