#!/usr/bin/env python3
"""Reference for the HTTP transport: what the official `tritonclient.http` sends and receives.

Reads a JSON array of jobs on stdin, writes a JSON array of results on stdout (exit 0 even when
Triton answers with an error; exit 2 only for malformed input).

Job:
{
  "url": "127.0.0.1:8000",
  "model_name": "identity_fp32",
  "binary_data": true,              # InferInput.set_data_from_numpy(binary_data=...), and the outputs'
  "inputs": [                       # same fields as tritonclient_probe.py: data_b64, values, data_b64_list
    {"name": "INPUT0", "datatype": "FP32", "shape": [3], "values": [1.5, "NaN"]}
  ],
  "outputs": ["OUTPUT0"]            # optional; without it tritonclient sets binary_data_output
}

Result:
{
  "request": {"json": {...}, "json_size": 123 | null, "binary_b64": "..."},   # exactly what is POSTed
  "response": {
    "header_length": 45 | null, "json": {...}, "binary_b64": "...",           # exactly what came back
    "outputs": [{"name", "datatype", "shape", "raw_b64"}]                      # as_numpy(), in wire form
  },
  "error": {"message": "...", "status": "400"}                                 # only on error
}
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request

import numpy as np
import tritonclient.http as httpclient
from tritonclient.utils import serialize_byte_tensor
from tritonclient_probe_common import b64 as _b64
from tritonclient_probe_common import input_array, serve_jobs


def _make_input(spec: dict, binary: bool) -> httpclient.InferInput:
    infer_input = httpclient.InferInput(spec["name"], [int(d) for d in spec["shape"]], spec["datatype"])
    infer_input.set_data_from_numpy(input_array(spec), binary_data=binary)
    return infer_input


def _wire(array: np.ndarray, datatype: str) -> bytes:
    if datatype == "BYTES":
        serialized = serialize_byte_tensor(array)
        return serialized.item() if serialized.size > 0 else b""
    return np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"), copy=False).tobytes()


def run(job: dict) -> dict:
    binary = bool(job.get("binary_data", True))
    inputs = [_make_input(spec, binary) for spec in job.get("inputs", [])]
    outputs = [httpclient.InferRequestedOutput(name, binary_data=binary) for name in job.get("outputs", [])] or None
    body, json_size = httpclient.InferenceServerClient.generate_request_body(inputs, outputs=outputs)
    head = body if json_size is None else body[:json_size]
    out: dict = {
        "request": {"json": json.loads(head), "json_size": json_size, "binary_b64": _b64(body[len(head):])},
    }
    headers = {"Content-Type": "application/octet-stream"}
    if json_size is not None:
        headers["Inference-Header-Content-Length"] = str(json_size)
    request = urllib.request.Request(
        f"http://{job['url']}/v2/models/{job['model_name']}/infer", data=body, headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            data = answer.read()
            length = answer.headers.get("Inference-Header-Content-Length")
    except urllib.error.HTTPError as e:
        out["error"] = {"message": e.read().decode("utf-8", "replace"), "status": str(e.code)}
        return out
    header_length = int(length) if length is not None else None
    result = httpclient.InferenceServerClient.parse_response_body(data, header_length=header_length)
    response = result.get_response()
    out["response"] = {
        "header_length": header_length,
        "json": response,
        "binary_b64": _b64(data[header_length:] if header_length is not None else b""),
        "outputs": [
            {
                "name": o["name"],
                "datatype": o["datatype"],
                "shape": list(o["shape"]),
                "raw_b64": _b64(_wire(result.as_numpy(o["name"]), o["datatype"])),
            }
            for o in response.get("outputs", [])
        ],
    }
    return out


def main() -> int:
    return serve_jobs(run, allow_single=False)


if __name__ == "__main__":
    sys.exit(main())
