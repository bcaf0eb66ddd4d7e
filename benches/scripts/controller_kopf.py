"""kopf running the controller benchmark's handler: on create of a ConfigMap, append "NAME UNIX_NS" to
$BENCH_OUT. Run as `kopf run --standalone --namespace $BENCH_NS` with KUBECONFIG=$BENCH_KUBECONFIG (see
controller-compare.sh)."""

import os
import time

import kopf

OUT = open(os.environ["BENCH_OUT"], "a", buffering=1)


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_):
    settings.posting.enabled = False
    settings.watching.server_timeout = 290


@kopf.on.create("v1", "configmaps")
def record(name, **_):
    OUT.write(f"{name} {time.time_ns()}\n")
