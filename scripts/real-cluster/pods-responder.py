#!/usr/bin/env python3
"""What the real control plane's pods serve (scripts/real-cluster.sh): kwok's kubelet API forwards every
pod port here. GET and HEAD of any path answer 200 with a short page; `/status/NNN` answers NNN, as the
local cluster's built-in responder does, so a test can make a check fail the same way on both clusters.

Usage: pods-responder.py PORT    (listens on 127.0.0.1)
"""
import http.server
import re
import sys

PAGE = b"piceli real-cluster: a kwok pod\n"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, body):
        m = re.fullmatch(r"/status/(\d{3})", self.path.split("?", 1)[0])
        status = int(m.group(1)) if m and 100 <= int(m.group(1)) <= 599 else 200
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        if body:
            self.wfile.write(PAGE)

    def do_GET(self):
        self.answer(True)

    def do_HEAD(self):
        self.answer(False)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
