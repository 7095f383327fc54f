"""What both tritonclient probes (tritonclient_probe.py over gRPC, tritonclient_http_probe.py over
HTTP) share: the input specs of a job turned into the numpy arrays tritonclient encodes, and the
stdin/stdout job loop. Only the standard library, numpy and tritonclient.utils: the probes import
their own tritonclient protocol module.
"""

from __future__ import annotations

import base64
import json
import sys
from typing import Callable

import numpy as np
from tritonclient.utils import triton_to_np_dtype

FLOAT_DATATYPES = ("FP16", "BF16", "FP32", "FP64")


def b64(data: bytes) -> str:
    return base64.b64encode(bytes(data)).decode("ascii")


def input_array(spec: dict) -> np.ndarray:
    """The array of one input spec: BYTES from "data" (UTF-8 text) or "data_b64_list", other
    datatypes from "values" (strings such as "NaN" or big integers parsed by Python) or from
    "data_b64" (raw little-endian bytes)."""
    datatype, shape = spec["datatype"], [int(d) for d in spec["shape"]]
    if datatype == "BYTES":
        if "data_b64_list" in spec:
            items = [base64.b64decode(x) for x in spec["data_b64_list"]]
        else:
            items = [s.encode("utf-8") for s in spec.get("data", [])]
        return np.array(items, dtype=np.object_).reshape(shape)
    np_dtype = np.dtype(triton_to_np_dtype(datatype))
    if "values" in spec:
        kind = "f" if datatype in FLOAT_DATATYPES else np_dtype.kind
        parse = {"f": float, "i": int, "u": int}.get(kind, lambda v: v)
        values = [parse(v) if isinstance(v, str) else v for v in spec["values"]]
        return np.array(values, dtype=np_dtype).reshape(shape)
    raw = base64.b64decode(spec.get("data_b64", ""))
    return np.frombuffer(raw, dtype=np_dtype.newbyteorder("<")).reshape(shape)


def serve_jobs(run: Callable[[dict], dict], allow_single: bool) -> int:
    """Reads a JSON array of jobs on stdin (or, when `allow_single`, one job object) and writes the
    results the same way on stdout. Exit 0 even when Triton answers with an error (it is in the
    result); exit 2 with a BAD_JOB error for malformed input."""
    try:
        job = json.load(sys.stdin)
        single = isinstance(job, dict) and allow_single
        jobs = [job] if single else job
        if not isinstance(jobs, list) or not all(isinstance(j, dict) and "model_name" in j for j in jobs):
            shape = "an object with model_name (or an array of them)" if allow_single else "a JSON array of jobs with model_name"
            raise ValueError(f"expected {shape}")
    except Exception as e:  # malformed input
        print(json.dumps({"error": {"message": f"bad job: {e}", "status": "BAD_JOB"}}))
        return 2
    results = [run(j) for j in jobs]
    json.dump(results[0] if single else results, sys.stdout)
    sys.stdout.write("\n")
    return 0
