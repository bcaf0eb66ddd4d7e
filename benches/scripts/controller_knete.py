"""knete 0.3.0 running the controller benchmark's handler: on create of a ConfigMap in $BENCH_NS, append
"NAME UNIX_NS" to $BENCH_OUT. The cluster comes from $BENCH_KUBECONFIG (token and CA data)."""

import base64
import os
import tempfile
import time

import knete
import yaml


def cluster(path):
    kc = yaml.safe_load(open(path))
    ctx = next(c["context"] for c in kc["contexts"] if c["name"] == kc["current-context"])
    server = next(c["cluster"] for c in kc["clusters"] if c["name"] == ctx["cluster"])
    user = next(u["user"] for u in kc["users"] if u["name"] == ctx["user"])
    ca = tempfile.NamedTemporaryFile(delete=False, suffix=".crt")
    ca.write(base64.b64decode(server["certificate-authority-data"]))
    ca.close()
    return server["server"], user["token"], ca.name


OUT = open(os.environ["BENCH_OUT"], "a", buffering=1)


class Record(knete.Controller):
    class Meta:
        resource = "configmaps"
        namespace = os.environ["BENCH_NS"]

    def on_create(self, name):
        OUT.write(f"{name} {time.time_ns()}\n")


server, token, ca = cluster(os.environ["BENCH_KUBECONFIG"])
manager = knete.Manager(api_server=server, token=token, ca_path=ca)
manager.register(Record)
manager.start()
