#!/usr/bin/env python3
"""Reference encoder/decoder: what the official `tritonclient.grpc` does.

Reads ONE JSON job on stdin, writes ONE JSON object on stdout (exit code 0
even when Triton answers with an error; exit 2 only for a malformed job).

Job:
{
  "url": "127.0.0.1:8001",          # required unless "dry_run": true
  "dry_run": false,                 # true: only build the request, do not connect
  "model_name": "identity_fp32",
  "model_version": "",              # optional
  "inputs": [
    {"name": "INPUT0", "datatype": "FP32", "shape": [3],
     "data_b64": "<base64 of raw little-endian bytes>"}          # non-BYTES
    {"name": "INPUT0", "datatype": "BYTES", "shape": [2],
     "data": ["utf-8 text", ...]}   # or "data_b64_list": ["<base64 of each element>", ...]
    {"name": "INPUT0", "datatype": "FP16", "shape": [2],
     "values": [1.5, "NaN"]}        # non-BYTES alternative to data_b64: numpy converts the values
                                    # (strings: "NaN"/"Infinity"/big ints, parsed by Python)
  ],
  "outputs": ["OUTPUT0"],           # optional requested outputs: names, or {"name", "class_count"}
  "request_id": "", "sequence_id": 0, "sequence_start": false, "sequence_end": false,
  "priority": 0, "timeout": null,   # timeout = Triton's server-side timeout parameter (microseconds)
  "parameters": {},                 # custom request parameters (str/bool/int/float)
  "headers": {},                    # gRPC metadata, e.g. {"triton-access-token": "..."}
  "client_timeout": null            # gRPC deadline in seconds
}

A JSON *array* of jobs on stdin gives a JSON array of outputs (one process, many jobs).

Output:
{
  "request": {
    "raw_input_contents_b64": ["..."],        # exactly the bytes tritonclient puts on the wire
    "inputs": [{"name", "datatype", "shape", "parameters"}],
    "serialized_b64": "..."                   # whole ModelInferRequest protobuf
                                              # (map field order is not deterministic)
  },
  "response": {                               # absent on dry_run or error
    "model_name", "model_version", "id", "parameters",
    "outputs": [{"name", "datatype", "shape", "raw_b64"}]   # raw_output_contents as received
  },
  "error": {"message": "...", "status": "StatusCode.UNAVAILABLE"}   # only on error
}
"""

from __future__ import annotations

import base64
import json
import sys

import numpy as np
import tritonclient.grpc as grpcclient
from google.protobuf import json_format
from tritonclient.grpc import _utils as grpc_utils
from tritonclient.utils import InferenceServerException, triton_to_np_dtype


def _b64(data: bytes) -> str:
    return base64.b64encode(bytes(data)).decode("ascii")


def _make_input(spec: dict) -> grpcclient.InferInput:
    name, datatype, shape = spec["name"], spec["datatype"], [int(d) for d in spec["shape"]]
    infer_input = grpcclient.InferInput(name, shape, datatype)
    if datatype == "BYTES":
        if "data_b64_list" in spec:
            items = [base64.b64decode(x) for x in spec["data_b64_list"]]
        else:
            items = [s.encode("utf-8") for s in spec.get("data", [])]
        array = np.array(items, dtype=np.object_).reshape(shape)
    elif "values" in spec:
        np_dtype = np.dtype(triton_to_np_dtype(datatype))
        kind = "f" if datatype in ("FP16", "BF16", "FP32", "FP64") else np_dtype.kind
        parse = {"f": float, "i": int, "u": int}.get(kind, lambda v: v)
        values = [parse(v) if isinstance(v, str) else v for v in spec["values"]]
        array = np.array(values, dtype=np_dtype).reshape(shape)
    else:
        raw = base64.b64decode(spec.get("data_b64", ""))
        array = np.frombuffer(raw, dtype=np.dtype(triton_to_np_dtype(datatype)).newbyteorder("<")).reshape(shape)
    infer_input.set_data_from_numpy(array)
    return infer_input


def run(job: dict) -> dict:
    inputs = [_make_input(spec) for spec in job.get("inputs", [])]
    outputs = [
        grpcclient.InferRequestedOutput(o)
        if isinstance(o, str)
        else grpcclient.InferRequestedOutput(o["name"], class_count=int(o.get("class_count", 0)))
        for o in job.get("outputs", [])
    ] or None
    kwargs = dict(
        model_name=job["model_name"],
        inputs=inputs,
        model_version=str(job.get("model_version", "")),
        request_id=str(job.get("request_id", "")),
        outputs=outputs,
        sequence_id=job.get("sequence_id", 0),
        sequence_start=bool(job.get("sequence_start", False)),
        sequence_end=bool(job.get("sequence_end", False)),
        priority=int(job.get("priority", 0)),
        timeout=job.get("timeout"),
        parameters=job.get("parameters") or None,
    )
    request = grpc_utils._get_inference_request(**kwargs)
    out: dict = {
        "request": {
            "raw_input_contents_b64": [_b64(c) for c in request.raw_input_contents],
            "inputs": [
                {
                    "name": t.name,
                    "datatype": t.datatype,
                    "shape": list(t.shape),
                    "parameters": json_format.MessageToDict(t, preserving_proto_field_name=True).get("parameters", {}),
                }
                for t in request.inputs
            ],
            "serialized_b64": _b64(request.SerializeToString()),
        }
    }
    if job.get("dry_run"):
        return out

    client = grpcclient.InferenceServerClient(url=job["url"])
    try:
        result = client.infer(
            **kwargs,
            headers=job.get("headers") or None,
            client_timeout=job.get("client_timeout"),
        )
        response = result.get_response()
        out["response"] = {
            "model_name": response.model_name,
            "model_version": response.model_version,
            "id": response.id,
            "parameters": json_format.MessageToDict(response, preserving_proto_field_name=True).get("parameters", {}),
            "outputs": [
                {
                    "name": o.name,
                    "datatype": o.datatype,
                    "shape": list(o.shape),
                    "raw_b64": _b64(response.raw_output_contents[i]) if i < len(response.raw_output_contents) else None,
                }
                for i, o in enumerate(response.outputs)
            ],
        }
    except InferenceServerException as e:
        out["error"] = {"message": e.message(), "status": e.status()}
    finally:
        client.close()
    return out


def main() -> int:
    try:
        job = json.load(sys.stdin)
        jobs = job if isinstance(job, list) else [job]
        if not all(isinstance(j, dict) and "model_name" in j for j in jobs):
            raise ValueError("job must be an object with model_name (or an array of them)")
    except Exception as e:  # malformed job
        print(json.dumps({"error": {"message": f"bad job: {e}", "status": "BAD_JOB"}}))
        return 2
    results = [run(j) for j in jobs]
    json.dump(results if isinstance(job, list) else results[0], sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
