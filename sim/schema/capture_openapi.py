#!/usr/bin/env python3
"""Capture kube-apiserver's OpenAPI documents into the file the simulator embeds.

Reads, from a real control plane started by `scripts/real-cluster.sh start DIR` (no custom resources
installed), `/openapi/v2` and every document the `/openapi/v3` index lists, byte for byte, and writes
`k8s-1.33-openapi.json.gz` beside this script:

    {"source": "<gitVersion>",
     "v2": "<the /openapi/v2 JSON text>",
     "v3": {"schemas": {"NAME": "<schema JSON text>", ...},
            "docs": {"PATH": {"head": "...", "schemas": ["NAME", ...], "tail": "..."}, ...}}}

Each v3 document is `head + "NAME":<schema>,... + tail` again, exactly (its SHA-512, which the index
publishes, is checked here); the component schemas the 45 documents share are stored once.

Usage: python3 sim/schema/capture_openapi.py DIR
"""
import gzip
import hashlib
import json
import os
import ssl
import sys
import urllib.request

DEC = json.JSONDecoder()


def fetch(ctx, server, path):
    with urllib.request.urlopen(server + path, context=ctx, timeout=60) as r:
        return r.read().decode("utf-8")


def members(text, i):
    """The (key, value start, value end) of the JSON object that starts at text[i]."""
    assert text[i] == "{"
    i += 1
    out = []
    while text[i] != "}":
        if text[i] == ",":
            i += 1
        key, j = DEC.raw_decode(text, i)
        assert text[j] == ":"
        _, end = DEC.raw_decode(text, j + 1)
        out.append((key, j + 1, end))
        i = end
    return out


def split(text, shared):
    """A document as head, schema names and tail, its schemas added to `shared`."""
    top = {k: (a, b) for k, a, b in members(text, 0)}
    if "components" not in top:
        return {"head": text, "schemas": [], "tail": ""}
    comp = {k: (a, b) for k, a, b in members(text, top["components"][0])}
    if "schemas" not in comp:
        return {"head": text, "schemas": [], "tail": ""}
    start, end = comp["schemas"]
    names = []
    for name, a, b in members(text, start):
        raw = text[a:b]
        if shared.get(name, raw) != raw:
            raise SystemExit(f"schema {name} differs between documents")
        shared[name] = raw
        names.append(name)
    return {"head": text[: start + 1], "schemas": names, "tail": text[end - 1 :]}


def join(doc, shared):
    body = ",".join(json.dumps(n) + ":" + shared[n] for n in doc["schemas"])
    return doc["head"] + body + doc["tail"]


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    d = sys.argv[1]
    server = None
    with open(os.path.join(d, "kubeconfig")) as f:
        for line in f:
            if line.strip().startswith("server:"):
                server = line.split("server:", 1)[1].strip()
    ctx = ssl.create_default_context(cafile=os.path.join(d, "pki", "ca.crt"))
    ctx.load_cert_chain(os.path.join(d, "pki", "admin.crt"), os.path.join(d, "pki", "admin.key"))
    version = json.loads(fetch(ctx, server, "/version"))["gitVersion"]
    crds = json.loads(fetch(ctx, server, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"))
    if crds.get("items"):
        raise SystemExit("the cluster has custom resources: capture from a fresh one")
    index = json.loads(fetch(ctx, server, "/openapi/v3"))
    shared, docs = {}, {}
    for path, entry in index["paths"].items():
        text = fetch(ctx, server, "/openapi/v3/" + path)
        want = entry["serverRelativeURL"].split("hash=", 1)[1]
        if hashlib.sha512(text.encode("utf-8")).hexdigest().upper() != want:
            raise SystemExit(f"{path}: the document changed while it was read")
        doc = split(text, shared)
        assert join(doc, shared) == text, path
        docs[path] = doc
    out = {
        "source": version,
        "v2": fetch(ctx, server, "/openapi/v2"),
        "v3": {"schemas": shared, "docs": docs},
    }
    target = os.path.join(os.path.dirname(os.path.abspath(__file__)), "k8s-1.33-openapi.json.gz")
    with open(target, "wb") as f:
        # mtime 0: the same capture gives the same bytes.
        f.write(gzip.compress(json.dumps(out, sort_keys=True).encode("utf-8"), 9, mtime=0))
    print(f"{target}: {version}, {len(docs)} v3 documents, {len(shared)} schemas")


if __name__ == "__main__":
    main()
