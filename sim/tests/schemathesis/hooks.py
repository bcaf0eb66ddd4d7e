"""Schemathesis hooks for the local cluster's API (sim/tests/it/schemathesis.rs, benches/scripts/schemathesis.sh).

- A watch is a stream that lasts `timeoutSeconds`: it is capped at 1 s, so a stream ends and only a real
  hang runs into the request timeout. Like kube-apiserver (apimachinery's string-to-bool conversion),
  any `watch` value but `0` and `false` (any case) asks for a watch: `watch=null` and `watch=` are; so does
  every deprecated `/watch/` path, whatever its parameters.
- `kube_status`: every 4xx and 5xx body is a well-formed `Status` (kind, apiVersion v1, status Failure,
  code equal to the HTTP status, a message) — what clients decode an error from.
- `kube_server_error`: no 5xx, except what kube-apiserver 1.33 itself answers with a 5xx (a watch whose
  resourceVersion is not a number: 500, as checked against the real control plane), and 503 for a node
  proxy (the local cluster's nodes have no kubelet server).
- `kube_same_as_real` (only when `PICELI_DIFF_REAL` names a JSON file with a real control plane's `url`,
  `ca`, `cert` and `key` paths; benches/scripts/schemathesis-vs-real.sh): each case is sent again, as it
  was, to the real kube-apiserver, and its status must be the same — the same 4xx for the same mistake, and
  success where it succeeds; where kube-apiserver answers a 5xx of its own, the case is not compared. Both
  clusters see the same requests in the same order.
"""
import json
import os

import schemathesis
from schemathesis import Case


def _flag(value) -> bool:
    """A boolean query parameter as kube-apiserver reads it (the first value counts)."""
    if isinstance(value, (list, tuple)):
        value = value[0] if value else ""
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    text = str(value)
    return not (text == "0" or text.lower() == "false")


def _is_watch(path: str, query) -> bool:
    return "/watch/" in path or bool(query and "watch" in query and _flag(query["watch"]))


@schemathesis.hook
def map_case(ctx, case):
    if _is_watch(case.path, case.query):
        case.query = dict(case.query or {})
        case.query["timeoutSeconds"] = 1
    return case


def _known_server_error(response, case: Case) -> bool:
    q = case.query or {}
    watch = _is_watch(case.path, q)
    rv = str(q.get("resourceVersion", ""))
    if response.status_code == 500 and watch and rv and not rv.isdigit():
        return True
    if response.status_code == 503 and case.path.endswith("/proxy") and "/nodes/" in case.path:
        return True
    return False


@schemathesis.check
def kube_status(ctx, response, case):
    if response.status_code < 400 or case.method.upper() == "HEAD":
        return None
    try:
        body = json.loads(response.content)
    except ValueError:
        raise AssertionError(f"a {response.status_code} whose body is not JSON: {response.content[:200]!r}")
    for key, want in (("kind", "Status"), ("apiVersion", "v1"), ("status", "Failure")):
        if body.get(key) != want:
            raise AssertionError(f"a {response.status_code} whose Status has {key}={body.get(key)!r}")
    if body.get("code") != response.status_code:
        raise AssertionError(f"a {response.status_code} whose Status says code {body.get('code')!r}")
    if not isinstance(body.get("message"), str):
        raise AssertionError(f"a {response.status_code} whose Status has no message")
    return None


@schemathesis.check
def kube_server_error(ctx, response, case):
    if response.status_code >= 500 and not _known_server_error(response, case):
        raise AssertionError(f"server error {response.status_code}: {response.content[:300]!r}")
    return None


_REAL = None


def _real():
    """The real control plane to compare with (a requests session with its client certificate), if any."""
    global _REAL
    if _REAL is None:
        path = os.environ.get("PICELI_DIFF_REAL")
        if not path:
            _REAL = False
        else:
            import requests

            with open(path) as f:
                real = json.load(f)
            session = requests.Session()
            session.cert = (real["cert"], real["key"])
            session.verify = real["ca"]
            _REAL = (real["url"], session, real)
    return _REAL


def _status_reason(response) -> str:
    try:
        return json.loads(response.content).get("reason", "")
    except ValueError:
        return ""


@schemathesis.check
def kube_same_as_real(ctx, response, case):
    real = _real()
    if not real:
        return None
    url, session, files = real
    # Its own CA and client certificate, not the local cluster's (schemathesis passes those otherwise).
    theirs = case.call(
        base_url=url,
        session=session,
        timeout=10,
        verify=files["ca"],
        cert=(files["cert"], files["key"]),
    )
    ours = response.status_code
    if ours == theirs.status_code or (ours < 300 and theirs.status_code < 300):
        return None
    # kube-apiserver's own 5xx (a DeleteOptions body its codec cannot decode, a kind not in its scheme)
    # are not copied: the local cluster's answer to those is held to `kube_status` and
    # `kube_server_error` instead.
    if theirs.status_code >= 500:
        return None
    raise AssertionError(
        f"the local cluster answers {ours} {_status_reason(response)}, kube-apiserver "
        f"{theirs.status_code} {_status_reason(theirs)}: {theirs.content[:300]!r}"
    )
