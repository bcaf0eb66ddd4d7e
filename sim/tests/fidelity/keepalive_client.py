"""One HTTP/1.1 connection to piceli-sim kept alive across pauses, as client pools (the official Python
client's urllib3, client-go, kube) reuse them: plain http.client, so a connection the server closed is an
error here (RemoteDisconnected, BrokenPipeError), not a silent reconnect.

Usage: python3 keepalive_client.py KUBECONFIG MODE SECONDS
  reuse   GET, stay idle SECONDS, then POST a ConfigMap of 600 KB on the same connection: 201.
  closed  GET, stay idle SECONDS: the server has closed the connection by then (EOF).
  drip    GET, stay idle SECONDS, then send the next request's head one byte every 100 ms: the server
          closes the connection (the header timeout counts from the first byte), within 10 s.
Prints one line starting with the mode and exits non-zero (with the reason) on any failure.
"""

import http.client
import json
import select
import ssl
import sys
import time

from kubernetes import client, config


def connect(kubeconfig):
    config.load_kube_config(config_file=kubeconfig, context="piceli-sim")
    c = client.Configuration.get_default_copy()
    host, port = c.host.removeprefix("https://").rsplit(":", 1)
    tls = ssl.create_default_context(cafile=c.ssl_ca_cert)
    tls.check_hostname = False
    conn = http.client.HTTPSConnection(host, int(port), context=tls, timeout=30)
    return conn, {"Authorization": c.get_api_key_with_prefix("authorization")}


def get(conn, auth):
    conn.request("GET", "/api/v1/namespaces/default/configmaps", headers=auth)
    r = conn.getresponse()
    body = r.read()
    assert r.status == 200, f"GET: {r.status} {body[:200]!r}"


def main(kubeconfig, mode, seconds):
    conn, auth = connect(kubeconfig)
    get(conn, auth)
    sock = conn.sock
    assert sock is not None, "no connection"
    time.sleep(seconds)
    if mode == "reuse":
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "after-a-pause"},
              "data": {"big": "x" * 600_000}}
        body = json.dumps(cm).encode()
        conn.request("POST", "/api/v1/namespaces/default/configmaps", body=body,
                     headers={**auth, "Content-Type": "application/json"})
        r = conn.getresponse()
        answer = r.read()
        assert r.status == 201, f"POST: {r.status} {answer[:200]!r}"
        assert conn.sock is sock, "http.client opened a new connection"
        print(f"reuse: 201 on the same connection after {seconds} s idle")
    elif mode == "closed":
        readable, _, _ = select.select([sock], [], [], 5)
        assert readable, f"the connection is still open after {seconds} s idle"
        try:
            data = sock.recv(1)
        except (ConnectionResetError, ssl.SSLError):
            data = b""
        assert data == b"", f"the server sent {data!r}"
        print(f"closed: the server closed the connection after {seconds} s idle")
    elif mode == "drip":
        head = b"GET /api HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 1000
        started = time.monotonic()
        for i in range(len(head)):
            try:
                sock.sendall(head[i:i + 1])
            except OSError:
                break
            readable, _, _ = select.select([sock], [], [], 0)
            if readable:
                try:
                    if sock.recv(1) == b"":
                        break
                except (ConnectionResetError, ssl.SSLError):
                    break
            assert time.monotonic() - started < 10, "a dripping request head is not closed"
            time.sleep(0.1)
        print(f"drip: closed {time.monotonic() - started:.1f} s after the first byte")
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]))
