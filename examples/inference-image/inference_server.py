"""PLACEHOLDER inference server: replace this file with your own server.

It runs no model. It exists so that the example image builds and the example
Deployment (examples/inference-deployment.yaml) has something that answers:

  GET /healthz   200 "ok" (the Deployment's startup and readiness checks)
  GET /          what the pod was given: ASCEND_VISIBLE_DEVICES and the
                 /dev/davinci* device nodes
  POST /infer    501: there is no model here

Python standard library only. Listens on $PORT (default 8080).
"""

import glob
import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    def _send(self, status, body, content_type="application/json"):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/healthz":
            self._send(200, "ok\n", "text/plain")
        elif self.path == "/":
            info = {
                "placeholder": True,
                "ascend_visible_devices": os.environ.get("ASCEND_VISIBLE_DEVICES", ""),
                "device_nodes": sorted(glob.glob("/dev/davinci*")),
            }
            self._send(200, json.dumps(info) + "\n")
        else:
            self._send(404, json.dumps({"error": "not found"}) + "\n")

    def do_POST(self):
        self._send(501, json.dumps({"error": "placeholder server: no model loaded"}) + "\n")


def main():
    port = int(os.environ.get("PORT", "8080"))
    server = ThreadingHTTPServer(("0.0.0.0", port), Handler)
    print(f"placeholder inference server on :{port}, NPUs: {os.environ.get('ASCEND_VISIBLE_DEVICES', 'none')}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
