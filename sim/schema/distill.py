#!/usr/bin/env python3
"""Distil the Kubernetes 1.33 JSON schemas into the compact file the simulator embeds.

Input: /work/shared/k8s-schema/v1.33/_definitions.json (see ORIGIN.md beside this script).
Output: k8s-1.33-schemas.json — every definition, with descriptions dropped, nullable type
lists ("string", "null") collapsed to the single type, and `$ref`s rewritten to OpenAPI v3's
`#/components/schemas/` form. Merge rules (x-kubernetes-*) are kept verbatim.

Also writes k8s-1.33-descriptions.json.gz beside OUTPUT: each definition's description and its
properties' descriptions ({"DEF": {"": "...", "properties": {"field": "..."}}}), which the
simulator adds to the OpenAPI documents it serves (`kubectl explain`).

Usage: python3 sim/schema/distill.py [INPUT] [OUTPUT]
"""
import gzip
import json
import os
import sys

KEEP = {
    "type", "properties", "items", "additionalProperties", "$ref", "required", "format",
    "enum", "oneOf", "anyOf", "allOf", "default",
}


def clean(node):
    if isinstance(node, list):
        return [clean(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "properties":
            out[key] = {name: clean(prop) for name, prop in value.items()}
        elif key.startswith("x-kubernetes-"):
            out[key] = value
        elif key not in KEEP:
            continue
        elif key == "type" and isinstance(value, list):
            types = [t for t in value if t != "null"]
            out[key] = types[0] if len(types) == 1 else types
        elif key == "$ref":
            out[key] = value.replace("#/$defs/", "#/components/schemas/")
        else:
            out[key] = clean(value)
    return out


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/k8s-schema/v1.33/_definitions.json"
    dst = sys.argv[2] if len(sys.argv) > 2 else "sim/schema/k8s-1.33-schemas.json"
    with open(src) as f:
        defs = json.load(f)["$defs"]
    out = {name: clean(d) for name, d in sorted(defs.items())}
    # The real OpenAPI v3 documents describe IntOrString this way; kubectl expects it.
    out["io.k8s.apimachinery.pkg.util.intstr.IntOrString"] = {"type": "string", "format": "int-or-string"}
    with open(dst, "w") as f:
        json.dump(out, f, separators=(",", ":"), sort_keys=True)
        f.write("\n")
    descriptions = {}
    for name, d in sorted(defs.items()):
        entry = {}
        if d.get("description"):
            entry[""] = d["description"]
        props = {k: p["description"] for k, p in (d.get("properties") or {}).items() if p.get("description")}
        if props:
            entry["properties"] = props
        if entry:
            descriptions[name] = entry
    text = json.dumps(descriptions, separators=(",", ":"), sort_keys=True).encode()
    path = os.path.join(os.path.dirname(dst), "k8s-1.33-descriptions.json.gz")
    with open(path, "wb") as f:
        # mtime 0: the same input gives the same bytes.
        with gzip.GzipFile(fileobj=f, mode="wb", mtime=0, filename="") as z:
            z.write(text)


if __name__ == "__main__":
    main()
