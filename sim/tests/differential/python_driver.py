"""The differential suite's Python runner: the official `kubernetes` client (33.1.0) against one cluster.

Usage: python3 python_driver.py KUBECONFIG CONTEXT. Prints `ready`, then reads one JSON operation per line
({"op": NAME, "args": {...}}) and answers each with one JSON line: {"code": HTTP status (or -1 for an
error that is not an API error), "out": the answer as the client decoded it, "err": ""}.
"""

import json
import sys
import traceback

from kubernetes import client, config, dynamic, watch
from kubernetes.client.rest import ApiException


def main(kubeconfig, context):
    config.load_kube_config(config_file=kubeconfig, context=context)
    api = client.ApiClient()
    ops = Ops(api)
    print("ready", flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        try:
            code, out = getattr(ops, req["op"])(**req["args"])
            reply = {"code": code, "out": out, "err": ""}
        except ApiException as e:
            try:
                body = json.loads(e.body)
            except (TypeError, ValueError):
                body = e.body
            reply = {"code": e.status, "out": body, "err": ""}
        except Exception as e:  # the comparison shows what went wrong on which side
            reply = {"code": -1, "out": None, "err": f"{type(e).__name__}: {e}"}
            traceback.print_exc()
        print(json.dumps(reply), flush=True)


class Ops:
    def __init__(self, api):
        self.api = api
        self.core = client.CoreV1Api(api)
        self.apps = client.AppsV1Api(api)
        self.custom = client.CustomObjectsApi(api)
        self.dyn = dynamic.DynamicClient(api)

    def done(self, triple):
        data, status, _headers = triple
        return status, self.api.sanitize_for_serialization(data)

    def create_cm(self, ns, name, data, labels=None):
        body = {"metadata": {"name": name, "labels": labels or {}}, "data": data}
        return self.done(self.core.create_namespaced_config_map_with_http_info(ns, body))

    def create_ns(self, name):
        return self.done(self.core.create_namespace_with_http_info({"metadata": {"name": name}}))

    def read_cm(self, ns, name):
        return self.done(self.core.read_namespaced_config_map_with_http_info(name, ns))

    def list_cm(self, ns, **kw):
        return self.done(self.core.list_namespaced_config_map_with_http_info(ns, **kw))

    def replace_cm(self, ns, name, data):
        cur = self.core.read_namespaced_config_map(name, ns)
        cur.data = data
        return self.done(self.core.replace_namespaced_config_map_with_http_info(name, ns, cur))

    def stale_replace_cm(self, ns, name, data):
        cur = self.core.read_namespaced_config_map(name, ns)
        cur.data = data
        cur.metadata.resource_version = "1"
        return self.done(self.core.replace_namespaced_config_map_with_http_info(name, ns, cur))

    def patch_cm(self, ns, name, body):
        return self.done(self.core.patch_namespaced_config_map_with_http_info(name, ns, body))

    def delete_cm(self, ns, name, **kw):
        return self.done(self.core.delete_namespaced_config_map_with_http_info(name, ns, **kw))

    def delete_collection_cm(self, ns, **kw):
        return self.done(self.core.delete_collection_namespaced_config_map_with_http_info(ns, **kw))

    def create_deployment(self, ns, body):
        return self.done(self.apps.create_namespaced_deployment_with_http_info(ns, body))

    def read_deployment(self, ns, name):
        return self.done(self.apps.read_namespaced_deployment_with_http_info(name, ns))

    def read_scale(self, ns, name):
        return self.done(self.apps.read_namespaced_deployment_scale_with_http_info(name, ns))

    def patch_scale(self, ns, name, replicas):
        body = {"spec": {"replicas": replicas}}
        return self.done(self.apps.patch_namespaced_deployment_scale_with_http_info(name, ns, body))

    def create_secret(self, ns, body):
        return self.done(self.core.create_namespaced_secret_with_http_info(ns, body))

    def read_secret(self, ns, name):
        return self.done(self.core.read_namespaced_secret_with_http_info(name, ns))

    def create_service(self, ns, body):
        return self.done(self.core.create_namespaced_service_with_http_info(ns, body))

    def create_custom(self, group, version, ns, plural, body):
        return self.done(
            self.custom.create_namespaced_custom_object_with_http_info(group, version, ns, plural, body)
        )

    def list_custom(self, group, version, ns, plural):
        return self.done(
            self.custom.list_namespaced_custom_object_with_http_info(group, version, ns, plural)
        )

    def patch_custom_status(self, group, version, ns, plural, name, body):
        return self.done(
            self.custom.patch_namespaced_custom_object_status_with_http_info(
                group, version, ns, plural, name, body
            )
        )

    def watch_cm(self, ns, count, timeout_seconds, **kw):
        w = watch.Watch()
        events = []
        for event in w.stream(self.core.list_namespaced_config_map, ns, timeout_seconds=timeout_seconds, **kw):
            events.append({"type": event["type"], "object": event["raw_object"]})
            if len(events) >= count:
                w.stop()
        return 200, events

    def dyn_apply(self, api_version, kind, ns, body, manager, force=False):
        res = self.dyn.resources.get(api_version=api_version, kind=kind)
        got = res.server_side_apply(body=body, namespace=ns, field_manager=manager, force_conflicts=force)
        return 200, got.to_dict()

    def dyn_get(self, api_version, kind, ns, name):
        res = self.dyn.resources.get(api_version=api_version, kind=kind)
        return 200, res.get(name=name, namespace=ns).to_dict()

    def dyn_list(self, api_version, kind, ns, **kw):
        res = self.dyn.resources.get(api_version=api_version, kind=kind)
        return 200, res.get(namespace=ns, **kw).to_dict()

    def dyn_resource(self, api_version, kind):
        res = self.dyn.resources.get(api_version=api_version, kind=kind)
        return 200, {
            "name": res.name,
            "namespaced": res.namespaced,
            "verbs": sorted(res.verbs or []),
            "short_names": res.short_names,
            "subresources": sorted(res.subresources.keys()),
        }

    def version(self):
        return self.done(client.VersionApi(self.api).get_code_with_http_info())

    def api_versions(self):
        return self.done(client.CoreApi(self.api).get_api_versions_with_http_info())

    def api_groups(self):
        return self.done(client.ApisApi(self.api).get_api_versions_with_http_info())

    def core_resources(self):
        return self.done(self.core.get_api_resources_with_http_info())


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
