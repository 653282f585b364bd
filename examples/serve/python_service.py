"""The same service as KernelService.java, in Python: TVM's runtime from the apache-tvm wheel, the
standard library's threaded HTTP server, the same module, protocol, answers and errors.

Usage: python python_service.py KERNEL_DIR [--port P] [--threads T]

Each handler thread keeps its own numpy arrays, shared with TVM without copying (DLPack); the
request body is read into them and the answer written from them, as the Java service does.
``--threads`` bounds how many requests run at once (a semaphore), like the Java service's pool.
Prints ``listening on PORT`` when ready.
"""

import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import tvm
import tvm_ffi

MAX_JSON_BYTES_PER_NUMBER = 40


class BadRequest(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def make_handler(kernel_dir: Path, threads: int):
    description_text = (kernel_dir / "kernel.json").read_text()
    description = json.loads(description_text)
    n = int(description["n"])
    function = tvm.runtime.load_module(str(kernel_dir / description["module"]))[description["function"]]
    request_bytes = 8 * n * n
    local = threading.local()
    slots = threading.BoundedSemaphore(threads)

    def aligned(shape):
        # TVM's kernels assume 64-byte aligned data; numpy gives 16 (a misaligned array faults in the GEMM)
        count = int(np.prod(shape))
        raw = np.zeros(count + 16, "float32")
        start = (-raw.ctypes.data % 64) // 4
        return raw[start:start + count].reshape(shape)

    def workspace():
        if not hasattr(local, "arrays"):
            arrays = [aligned((n, n)), aligned((n * n,)), aligned((n, n)), aligned((n, n)), aligned((n,))]
            local.arrays = arrays
            local.tensors = [tvm_ffi.from_dlpack(x) for x in arrays]
        return local.arrays, local.tensors

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # head and body are two writes; Nagle plus delayed ACKs would add ~40 ms

        def log_message(self, *args):
            pass

        def _send(self, status, content_type, body: bytes):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _error(self, status, message):
            self.close_connection = True  # the body may be unread
            self._send(status, "application/json", json.dumps({"error": message}).encode())

        def _dispatch(self, method):
            try:
                path = urlsplit(self.path).path
                routes = {"/health": "GET", "/v1/kernel": "GET", "/v1/gemm_rowsum": "POST"}
                if path not in routes:
                    raise BadRequest(404, f"no such endpoint: {path} (POST /v1/gemm_rowsum, GET /v1/kernel, GET /health)")
                if method != routes[path]:
                    raise BadRequest(405, f"method {method} not allowed here; use {routes[path]}")
                if path == "/health":
                    self._send(200, "text/plain", b"ok\n")
                elif path == "/v1/kernel":
                    self._send(200, "application/json", description_text.encode())
                else:
                    with slots:
                        self._compute()
            except BadRequest as e:
                self._error(e.status, str(e))
            except (ConnectionError, TimeoutError):
                self.close_connection = True
            except Exception as e:  # noqa: BLE001  (a service answers, never dies)
                self._error(500, f"internal error: {e!r}")

        def do_GET(self):
            self._dispatch("GET")

        def do_POST(self):
            self._dispatch("POST")

        def _compute(self):
            content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            with_c = "c=1" in (urlsplit(self.path).query or "").split("&")
            length_text = self.headers.get("Content-Length")
            if length_text is None or not length_text.strip().isdigit():
                raise BadRequest(411, "a Content-Length is required")
            length = int(length_text)
            arrays, tensors = workspace()
            if content_type == "application/octet-stream":
                if length != request_bytes:
                    raise BadRequest(413 if length > request_bytes else 400,
                                     f"Content-Length is {length}; this kernel (N={n}) needs {request_bytes} bytes "
                                     f"(A then column-major B, float32 little-endian)")
                for target in (arrays[0], arrays[1]):
                    view = memoryview(target).cast("B")
                    got = 0
                    while got < len(view):
                        k = self.rfile.readinto(view[got:])
                        if not k:
                            raise BadRequest(400, f"the body ended after {got} bytes")
                        got += k
                function(*tensors)
                body = (arrays[3].tobytes() if with_c else b"") + arrays[4].tobytes()
                self._send(200, "application/octet-stream", body)
            elif content_type == "application/json":
                cap = 2 * n * n * MAX_JSON_BYTES_PER_NUMBER + 4096
                if length > cap:
                    raise BadRequest(413, f"the JSON body is larger than {cap} bytes")
                try:
                    request = json.loads(self.rfile.read(length))
                except ValueError as e:
                    raise BadRequest(400, f"the body is not valid JSON: {e}") from None
                if not isinstance(request, dict):
                    raise BadRequest(400, 'the JSON body must be an object {"a": [...], "b": [...]}')
                for name, target in (("a", arrays[0].reshape(-1)), ("b", arrays[1])):
                    values = request.get(name)
                    if not isinstance(values, list):
                        raise BadRequest(400, f'"{name}" must be an array of {n * n} numbers')
                    if len(values) != n * n:
                        raise BadRequest(400, f'"{name}" has {len(values)} numbers; this kernel (N={n}) needs {n * n}')
                    for i, v in enumerate(values):
                        if isinstance(v, bool) or not isinstance(v, (int, float)):
                            raise BadRequest(400, f'"{name}"[{i}] is {json.dumps(v)}, not a number')
                    converted = np.asarray(values, dtype="float32")
                    if not np.isfinite(converted).all():
                        i = int(np.argmin(np.isfinite(converted)))
                        raise BadRequest(400, f'"{name}"[{i}] = {values[i]} is not a finite float32')
                    target[:] = converted
                function(*tensors)
                answer = {"row_sums": arrays[4].tolist()}
                if with_c:
                    answer["c"] = arrays[3].reshape(-1).tolist()
                self._send(200, "application/json", json.dumps(answer).encode())
            else:
                shown = f"'{self.headers.get('Content-Type')}'" if self.headers.get("Content-Type") else "(none)"
                raise BadRequest(415, f"Content-Type {shown} is not supported: send application/octet-stream "
                                      f"({request_bytes} bytes: A then column-major B, float32 little-endian) "
                                      f"or application/json")

    return Handler, n


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernel_dir")
    parser.add_argument("--port", type=int, default=8081)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    handler, n = make_handler(Path(args.kernel_dir), args.threads)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), handler)
    server.daemon_threads = True
    print(f"listening on {server.server_address[1]} (N={n}, {args.threads} threads)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
