"""Functional check of the Java kernel service: right answers, 4xx with a message for each kind of bad
request, and the service still running and right afterwards.

Usage: python check_service.py KERNEL_DIR --java JAR

Starts the service on a free port from an empty working directory with no AXE4J_* variables, so the
Java service finds TVM only through the tvm-runtime-natives jar; exits 1 naming the first failure.
"""

import argparse
import http.client
import json
import os
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import numpy as np


def start(kernel_dir: Path, java_jar, workdir: str):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AXE4J_")}
    command = ["java", "-jar", str(Path(java_jar).resolve()), str(kernel_dir.resolve()), "--port", "0",
               "--threads", "2"]
    process = subprocess.Popen(command, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    banner = []
    deadline = time.time() + 60
    while time.time() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        banner.append(line.rstrip())
        if line.startswith("listening on "):
            threading.Thread(target=lambda: [None for _ in process.stdout], daemon=True).start()
            return process, int(line.split()[2]), banner
    process.kill()
    raise SystemExit(f"FAIL: the service did not start: {' | '.join(banner)}")


class Client:
    def __init__(self, port):
        self.port = port

    def request(self, method, path, body=None, content_type=None):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        headers = {"Content-Type": content_type} if content_type else {}
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        data = response.read()
        connection.close()
        return response.status, response.getheader("Content-Type"), data


def expect(condition, message):
    if not condition:
        raise SystemExit(f"FAIL: {message}")


HANG_UPS = 300


def held_connections(pid):
    """Instances of the JDK server's connection class alive in the service's heap (jcmd forces a full GC first)."""
    histogram = subprocess.run(["jcmd", str(pid), "GC.class_histogram"], capture_output=True, text=True, check=True)
    for line in histogram.stdout.splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[3] == "sun.net.httpserver.HttpConnection":
            return int(fields[1])
    return 0


def check(kernel_dir: Path, java_jar):
    n = json.loads((kernel_dir / "kernel.json").read_text())["n"]
    rng = np.random.default_rng(7)
    a = rng.standard_normal((n, n)).astype("float32")
    b = rng.standard_normal((n, n)).astype("float32")
    b_column_major = b.T.reshape(-1).copy()
    c_ref = a.astype("float64") @ b.astype("float64")
    body = a.tobytes() + b_column_major.tobytes()
    with tempfile.TemporaryDirectory() as workdir:
        process, port, banner = start(kernel_dir, java_jar, workdir)
        held = None
        try:
            expect(any("axe4j-natives" in line and "runtime only" in line for line in banner),
                   f"the Java service should load TVM from the natives jar, runtime only: {banner}")
            client = Client(port)

            def good_binary():
                status, _, data = client.request("POST", "/v1/gemm_rowsum", body, "application/octet-stream")
                expect(status == 200, f"binary request: status {status} {data[:200]!r}")
                r = np.frombuffer(data, dtype="<f4")
                expect(r.shape == (n,), f"binary answer has {r.size} floats, not {n}")
                np.testing.assert_allclose(r, c_ref.sum(axis=1), rtol=1e-3, atol=1e-2)

            good_binary()
            status, _, data = client.request("POST", "/v1/gemm_rowsum?c=1", body, "application/octet-stream")
            expect(status == 200, f"binary request with c=1: status {status}")
            answer = np.frombuffer(data, dtype="<f4")
            np.testing.assert_allclose(answer[:n * n].reshape(n, n), c_ref, rtol=1e-4, atol=1e-3)
            request = json.dumps({"a": a.reshape(-1).tolist(), "b": b_column_major.tolist()}).encode()
            status, content_type, data = client.request("POST", "/v1/gemm_rowsum", request, "application/json")
            expect(status == 200 and content_type.startswith("application/json"), f"JSON request: {status} {data[:200]!r}")
            np.testing.assert_allclose(json.loads(data)["row_sums"], c_ref.sum(axis=1), rtol=1e-3, atol=1e-2)
            expect(client.request("GET", "/health")[0] == 200, "health")
            expect(json.loads(client.request("GET", "/v1/kernel")[2])["n"] == n, "kernel description")

            bad = [
                ("short binary body", "POST", "/v1/gemm_rowsum", body[:-4], "application/octet-stream", 400,
                 str(8 * n * n)),
                ("long binary body", "POST", "/v1/gemm_rowsum", body + b"xxxx", "application/octet-stream", 413,
                 str(8 * n * n)),
                ("empty body", "POST", "/v1/gemm_rowsum", b"", "application/octet-stream", 400, "needs"),
                ("unsupported content type", "POST", "/v1/gemm_rowsum", body, "text/plain", 415, "Content-Type"),
                ("no content type", "POST", "/v1/gemm_rowsum", body, None, 415, "Content-Type"),
                ("broken JSON", "POST", "/v1/gemm_rowsum", b'{"a": [1, 2', "application/json", 400, "JSON"),
                ("JSON array body", "POST", "/v1/gemm_rowsum", b"[1, 2]", "application/json", 400, "object"),
                ("JSON missing b", "POST", "/v1/gemm_rowsum", json.dumps({"a": [0.0] * (n * n)}).encode(),
                 "application/json", 400, '"b"'),
                ("JSON wrong count", "POST", "/v1/gemm_rowsum", json.dumps({"a": [1.0] * 3, "b": [1.0] * 3}).encode(),
                 "application/json", 400, "has 3 numbers"),
                ("JSON string element", "POST", "/v1/gemm_rowsum",
                 json.dumps({"a": ["x"] + [0.0] * (n * n - 1), "b": [0.0] * (n * n)}).encode(), "application/json",
                 400, '"a"[0]'),
                ("JSON NaN element", "POST", "/v1/gemm_rowsum",
                 json.dumps({"a": [0.0] * (n * n), "b": [0.0] * 5 + [float("nan")] + [0.0] * (n * n - 6)}).encode(),
                 "application/json", 400, '"b"[5]'),
                ("JSON overflowing element", "POST", "/v1/gemm_rowsum",
                 json.dumps({"a": [1e39] + [0.0] * (n * n - 1), "b": [0.0] * (n * n)}).encode(), "application/json",
                 400, '"a"[0]'),
                ("unknown path", "GET", "/v2/nothing", None, None, 404, "/v2/nothing"),
                ("wrong method", "GET", "/v1/gemm_rowsum", None, None, 405, "POST"),
                ("wrong method on health", "POST", "/health", b"", "text/plain", 405, "GET"),
            ]
            for name, method, path, payload, content_type, want, needle in bad:
                status, content_type_back, data = client.request(method, path, payload, content_type)
                expect(status == want, f"{name}: status {status}, expected {want}: {data[:300]!r}")
                message = json.loads(data)["error"]
                expect(needle in message, f"{name}: the message {message!r} should mention {needle!r}")
            # a client that is not HTTP at all, and one that hangs up half-way through its body
            with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                s.sendall(b"\x00\x01garbage that is not HTTP\r\n\r\n")
                s.recv(1024)
            for _ in range(HANG_UPS):
                with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                    s.sendall(b"POST /v1/gemm_rowsum HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
                              + f"Content-Length: {len(body)}\r\n\r\n".encode() + body[:1000])
            good_binary()
            held = held_connections(process.pid)
            expect(held < HANG_UPS // 4, f"{held} HTTP connections held after {HANG_UPS} clients hung up mid-body: "
                   "the service keeps a dropped client's connection")

            errors = []

            def worker():
                try:
                    for _ in range(10):
                        good_binary()
                except BaseException as e:  # noqa: BLE001
                    errors.append(e)

            threads = [threading.Thread(target=worker) for _ in range(6)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            expect(not errors, f"concurrent requests: {errors[:1]}")
            expect(process.poll() is None, f"the service exited with {process.returncode}")
        finally:
            process.terminate()
            process.wait(timeout=30)
    print(f"Java service: right answers (binary, JSON, with C), {len(bad)} bad requests answered 4xx with a "
          f"message, garbage survived, "
          f"{HANG_UPS} clients hung up mid-body ({held} connections held after), 60 concurrent requests right (N={n})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernel_dir")
    parser.add_argument("--java", metavar="JAR", required=True)
    args = parser.parse_args()
    check(Path(args.kernel_dir), args.java)


if __name__ == "__main__":
    main()
