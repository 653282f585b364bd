"""The Python peer of `axe serve` for `make bench-serve`: a Starlette app under uvicorn serving every function of a
module `axe4j.export_library` wrote, by its manifest, with the requests and answers of `axe serve` (docs/serving.md).

Usage: python benchmarks/serve_peer.py LIBRARY.so [--port P] [--workers W]

The configuration a Python user tuning for speed would pick: uvicorn with ``--workers W`` processes (one per kernel
that may run at once, as `axe serve --threads W`; a process each, since one event loop runs one kernel at a time and
threads would share the GIL), the uvloop event loop, the httptools HTTP parser, no access log, and orjson for JSON
(numpy arrays written by orjson directly). Each worker loads the module with TVM's runtime (apache-tvm) and makes one
set of 64-byte aligned numpy arrays per function on first use, shared with TVM without copying (DLPack): a request's
body is copied into the input arrays, the kernel runs in place, the answer is made from the output arrays. The kernel
runs on the event loop itself, between the body's arrival and the answer, with nothing awaited in between (so one
set of arrays per process is safe, and no thread hand-off is paid).

POST /v1/F  application/octet-stream: the inputs' bytes in manifest order -> the outputs' bytes (header X-Outputs)
            application/json {"inputs": {"A": [[...]], ...}} -> {"outputs": {"C": [[...]], ...}}
GET /v1/functions, GET /healthz. A bad request gets 4xx with {"error", "kind"} (size, content type, JSON, argument,
shape, unknown function).
"""

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np
import orjson

LIBRARY_ENV = "AXE_SERVE_PEER_LIBRARY"


class BadRequest(Exception):
    def __init__(self, status, kind, message):
        super().__init__(message)
        self.status = status
        self.kind = kind


def aligned(shape, dtype):
    """A zeroed array whose data is 64-byte aligned (TVM's CPU kernels assume it; numpy gives 16)."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape))
    raw = np.zeros(count * dtype.itemsize + 64, np.uint8)
    start = -raw.ctypes.data % 64
    return raw[start:start + count * dtype.itemsize].view(dtype).reshape(shape)


class Function:
    """One function of the manifest: its arguments and, made on first use, its arrays and TVM tensors."""

    def __init__(self, module, spec):
        self.name = spec["name"]
        self.args = spec["args"]
        self.packed = module[self.name]
        self.inputs = [a for a in self.args if a["role"] in ("input", "inout")]
        self.outputs = [a for a in self.args if a["role"] in ("output", "inout")]
        self.input_bytes = sum(int(np.prod(a["shape"])) * np.dtype(a["dtype"]).itemsize for a in self.inputs)
        self.x_outputs = "; ".join(f"{a['name']} {a['dtype']}{list(a['shape'])}" for a in self.outputs)
        self.arrays = None
        self.tensors = None

    def workspace(self):
        if self.arrays is None:
            import tvm_ffi

            self.arrays = {a["name"]: aligned(a["shape"], a["dtype"]) for a in self.args}
            self.tensors = [tvm_ffi.from_dlpack(self.arrays[a["name"]]) for a in self.args]
        return self.arrays

    def run(self):
        self.packed(*self.tensors)


def load(library: Path):
    import tvm

    manifest = json.loads(Path(str(library) + ".manifest.json").read_text())
    if manifest["device"]["kind"] != "cpu":
        raise SystemExit(f"{library}: this peer serves CPU modules only, not {manifest['device']['kind']}")
    module = tvm.runtime.load_module(str(library))
    return manifest, {f["name"]: Function(module, f) for f in manifest["functions"]}


def make_app(library: Path):
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Route

    manifest, functions = load(library)
    manifest_bytes = orjson.dumps(manifest)

    def error(e: BadRequest):
        return Response(orjson.dumps({"error": str(e), "kind": e.kind}), status_code=e.status,
                        media_type="application/json")

    def fill_binary(f: Function, body: bytes):
        if len(body) != f.input_bytes:
            raise BadRequest(413 if len(body) > f.input_bytes else 400, "bad_size",
                             f"the body is {len(body)} bytes; {f.name} takes {f.input_bytes} bytes")
        arrays = f.workspace()
        view = memoryview(body)
        offset = 0
        for a in f.inputs:
            target = arrays[a["name"]]
            memoryview(target).cast("B")[:] = view[offset:offset + target.nbytes]
            offset += target.nbytes

    def fill_json(f: Function, body: bytes):
        try:
            parsed = orjson.loads(body)
        except orjson.JSONDecodeError as e:
            raise BadRequest(400, "bad_json", f"the body is not valid JSON: {e}") from None
        given = parsed.get("inputs") if isinstance(parsed, dict) else None
        if not isinstance(given, dict):
            raise BadRequest(400, "bad_json", 'the body must be {"inputs": {...}}')
        for key in given:
            if all(a["name"] != key for a in f.inputs):
                raise BadRequest(400, "bad_argument", f"'{key}' is not an input of {f.name}")
        arrays = f.workspace()
        for a in f.inputs:
            if a["name"] not in given:
                raise BadRequest(400, "bad_argument", f"input {a['name']} is missing")
            try:
                values = np.asarray(given[a["name"]], dtype=a["dtype"])
            except (ValueError, TypeError) as e:
                raise BadRequest(400, "bad_shape", f"argument {a['name']}: {e}") from None
            if list(values.shape) != list(a["shape"]):
                raise BadRequest(400, "bad_shape", f"argument {a['name']}: expected shape {a['shape']}, given shape "
                                                   f"{list(values.shape)}")
            arrays[a["name"]][...] = values

    async def compute(request):
        name = request.path_params["function"]
        f = functions.get(name)
        try:
            if f is None:
                raise BadRequest(404, "unknown_function", f"no function '{name}' in module {manifest['library']}; "
                                                          f"it has {sorted(functions)}")
            media = request.headers.get("content-type", "").split(";")[0].strip().lower()
            if media not in ("application/octet-stream", "application/json"):
                raise BadRequest(415, "bad_content_type", f"Content-Type '{media}' is not served")
            body = await request.body()
            # from here to the answer nothing is awaited: this process's arrays are ours alone
            if media == "application/octet-stream":
                fill_binary(f, body)
                f.run()
                arrays = f.arrays
                out = b"".join(arrays[a["name"]].tobytes() for a in f.outputs)
                return Response(out, media_type="application/octet-stream", headers={"X-Outputs": f.x_outputs})
            fill_json(f, body)
            f.run()
            outputs = {a["name"]: f.arrays[a["name"]] for a in f.outputs}
            return Response(orjson.dumps({"outputs": outputs}, option=orjson.OPT_SERIALIZE_NUMPY),
                            media_type="application/json")
        except BadRequest as e:
            return error(e)

    async def functions_list(request):
        return Response(manifest_bytes, media_type="application/json")

    async def healthz(request):
        return Response(b"ok\n", media_type="text/plain")

    return Starlette(routes=[Route("/v1/functions", functions_list), Route("/healthz", healthz),
                             Route("/v1/{function}", compute, methods=["POST"])])


def app_factory():
    """The app of one uvicorn worker (uvicorn's --factory): the library comes from the environment."""
    return make_app(Path(os.environ[LIBRARY_ENV]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library")
    parser.add_argument("--port", type=int, default=8081)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    import uvicorn

    os.environ[LIBRARY_ENV] = str(Path(args.library).resolve())
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    uvicorn.run("serve_peer:app_factory", factory=True, host="127.0.0.1", port=args.port, workers=args.workers,
                loop="uvloop", http="httptools", access_log=False, log_level="warning", backlog=256)


if __name__ == "__main__":
    main()
