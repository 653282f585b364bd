"""The Python twin of ``DeviceKernelService``: the same kernel, protocol and per-thread set-up, for the load test.

Standard library and the bundle's ctypes bindings only (``tvm_ffi_ctypes.py`` for the module, ``run.py``'s ``Cuda``
for memory and streams): each handler thread has device buffers, pinned staging buffers and a CUDA stream of its own,
made on its first request; a request's body is read into the staging buffers, copied to the GPU, the kernel launches
on the thread's stream (``TVMFFIEnvSetStream``), the outputs come back and are written from the staging buffers.

usage: python3 python_device_service.py KERNEL_JSON [--port P] [--threads T]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run as runner  # noqa: E402
import tvm_ffi_ctypes as ffi  # noqa: E402

ELEMENT_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4, "int32": 4, "int8": 1, "uint8": 1, "int64": 8}


class Service:
    def __init__(self, description: Path):
        spec = json.loads(description.read_text())
        self.cuda = runner.Cuda(runner.find_library("libcudart.so.13*"))
        self.cuda.check(self.cuda.lib.cudaSetDevice(0), "cudaSetDevice(0)")
        self.cuda.lib.cudaHostAlloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_uint]
        self.cuda.lib.cudaMemcpyAsync.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                                  ctypes.c_void_p]
        self.cuda.lib.cudaStreamCreateWithFlags.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint]
        self.cuda.lib.cudaStreamSynchronize.argtypes = [ctypes.c_void_p]
        self.runtime = ffi.Runtime(str(HERE / "lib"), cuda=True)
        fatbins = HERE / "fatbins"

        def compile_cuda(source, *_):
            import hashlib

            return (fatbins / f"{hashlib.sha256(source.encode(errors='surrogateescape')).hexdigest()}.fatbin"
                    ).read_bytes()

        self.runtime.register("tvm_callback_cuda_compile", compile_cuda)
        self.runtime.lib.TVMFFIEnvSetStream.argtypes = [ctypes.c_int32, ctypes.c_int32, ctypes.c_void_p,
                                                        ctypes.c_void_p]
        module = self.runtime.load_module(str(description.parent / spec["module"]))
        self.function = module.function(spec["function"])
        self.args = spec["args"]
        self.inputs, self.outputs = spec["inputs"], spec["outputs"]
        self.sizes = [ELEMENT_BYTES[a["dtype"]] * _count(a["shape"]) for a in self.args]
        self.request_bytes = sum(self.sizes[i] for i in self.inputs)
        self.answer_bytes = sum(self.sizes[i] for i in self.outputs)
        self.local = threading.local()

    def workspace(self):
        """This thread's device buffers, pinned staging and stream, made once."""
        w = getattr(self.local, "w", None)
        if w is None:
            lib = self.cuda.lib
            stream = ctypes.c_void_p()
            self.cuda.check(lib.cudaStreamCreateWithFlags(ctypes.byref(stream), 1), "cudaStreamCreateWithFlags")
            device, staging, views, tensors = [], [], [], []
            for arg, size in zip(self.args, self.sizes):
                device.append(self.cuda.malloc(size))
                pinned = ctypes.c_void_p()
                self.cuda.check(lib.cudaHostAlloc(ctypes.byref(pinned), max(1, size), 1), "cudaHostAlloc")
                staging.append(pinned.value)
                views.append(memoryview((ctypes.c_char * size).from_address(pinned.value)).cast("B"))
                tensors.append(ffi.Tensor(device[-1], arg["shape"], arg["dtype"], ffi.CUDA, 0))
            w = self.local.w = (stream.value, device, staging, views, tensors)
        return w

    def run(self, read_into, write):
        stream, device, staging, views, tensors = self.workspace()
        lib = self.cuda.lib
        for i in self.inputs:
            if read_into(views[i]) != self.sizes[i]:
                return False
        for i in self.inputs:
            self.cuda.check(lib.cudaMemcpyAsync(device[i], staging[i], self.sizes[i], runner.H2D, stream),
                            "cudaMemcpyAsync")
        previous = ctypes.c_void_p()
        self.runtime.lib.TVMFFIEnvSetStream(ffi.CUDA, 0, stream, ctypes.byref(previous))
        try:
            self.function(*tensors)
        finally:
            self.runtime.lib.TVMFFIEnvSetStream(ffi.CUDA, 0, previous, None)
        for i in self.outputs:
            self.cuda.check(lib.cudaMemcpyAsync(staging[i], device[i], self.sizes[i], runner.D2H, stream),
                            "cudaMemcpyAsync")
        self.cuda.check(lib.cudaStreamSynchronize(stream), "cudaStreamSynchronize")
        for i in self.outputs:
            write(views[i])
        return True


def _count(shape) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernel", type=Path)
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args(argv)
    service = Service(args.kernel)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def do_GET(self):
            self._send(200 if self.path == "/health" else 404, b"ok\n" if self.path == "/health" else b"{}")

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            if self.path != "/v1/run" or length != service.request_bytes:
                self.rfile.read(length)
                self._send(400, json.dumps({"error": f"the body must be exactly {service.request_bytes} bytes"})
                           .encode())
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(service.answer_bytes))
            ok = service.run(self.rfile.readinto, self._write_after_headers)
            if not ok:
                self.close_connection = True

        def _write_after_headers(self, view):
            if not getattr(self, "_headers_done", False):
                self.end_headers()
                self._headers_done = True
            self.wfile.write(view)

        def setup(self):
            super().setup()
            self.request.setsockopt(__import__("socket").IPPROTO_TCP, __import__("socket").TCP_NODELAY, 1)

        def handle_one_request(self):
            self._headers_done = False
            super().handle_one_request()

        def _send(self, status, body):
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 256

    server = Server(("127.0.0.1", args.port), Handler)
    print(f"listening on {server.server_address[1]} ({service.request_bytes} bytes in, {service.answer_bytes} out)",
          flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
