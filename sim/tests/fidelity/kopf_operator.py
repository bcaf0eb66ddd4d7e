"""A small kopf operator on the CRD widgets.piceli.dev, run in-process with kopf.run (standalone, no
peering), logging in with the kubeconfig given on the command line and nothing else:

  create  annotates the Widget `piceli.dev/created-size`, posts an Event (reason Created, "size N")
          and returns {"size": N} (kopf stores it in status.on_create)
  update  of spec.size: writes status.resized "OLD->NEW"
  delete  prints its line (kopf's finalizer holds the Widget until it has run)

Each handler prints one line on stdout (`create w1 size=1`, `update w1 1->2`, `delete w1`); kopf logs
on stderr. Usage: python3 kopf_operator.py KUBECONFIG. Runs until killed; exits non-zero at once when
kopf (pip install kopf) or the kubernetes client is missing.
"""

import logging
import sys

import kopf
from kubernetes import client, config

KUBECONFIG = sys.argv[1]
GROUP, VERSION, PLURAL = "piceli.dev", "v1", "widgets"


@kopf.on.login()
def login(**_):
    """Credentials from the test's kubeconfig only (never ~/.kube/config or $KUBECONFIG)."""
    cfg = client.Configuration()
    config.load_kube_config(config_file=KUBECONFIG, context="piceli-sim", client_configuration=cfg)
    return kopf.ConnectionInfo(
        server=cfg.host,
        ca_path=cfg.ssl_ca_cert,
        scheme="Bearer",
        token=cfg.api_key["authorization"].removeprefix("Bearer "),
        default_namespace="default",
    )


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_):
    settings.watching.server_timeout = 60
    settings.watching.client_timeout = 90


@kopf.on.create(GROUP, VERSION, PLURAL)
def on_create(body, spec, name, patch, **_):
    size = spec.get("size")
    patch.metadata.annotations["piceli.dev/created-size"] = str(size)
    kopf.info(body, reason="Created", message=f"size {size}")
    print(f"create {name} size={size}", flush=True)
    return {"size": size}


@kopf.on.update(GROUP, VERSION, PLURAL, field="spec.size")
def on_update(old, new, name, patch, **_):
    patch.status["resized"] = f"{old}->{new}"
    print(f"update {name} {old}->{new}", flush=True)


@kopf.on.delete(GROUP, VERSION, PLURAL)
def on_delete(name, **_):
    print(f"delete {name}", flush=True)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    kopf.run(standalone=True, clusterwide=True)
