"""Reads `kubectl get deploy -o json` (a file): exits 1 unless every Deployment is Available, else prints the
seconds from the first creation to the last Available transition (both at the apiserver's 1 s resolution)."""

import datetime
import json
import sys


def at(stamp):
    return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))


items = json.load(open(sys.argv[1]))["items"]
available = []
for d in items:
    cond = [c for c in d.get("status", {}).get("conditions", []) if c["type"] == "Available"]
    if not cond or cond[0]["status"] != "True":
        sys.exit(1)
    available.append(at(cond[0]["lastTransitionTime"]))
if not items:
    sys.exit(1)
created = min(at(d["metadata"]["creationTimestamp"]) for d in items)
print(int((max(available) - created).total_seconds()))
