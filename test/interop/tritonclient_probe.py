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

import sys

import tritonclient.grpc as grpcclient
from google.protobuf import json_format
from tritonclient.grpc import _utils as grpc_utils
from tritonclient.utils import InferenceServerException
from tritonclient_probe_common import b64 as _b64
from tritonclient_probe_common import input_array, serve_jobs


def _make_input(spec: dict) -> grpcclient.InferInput:
    infer_input = grpcclient.InferInput(spec["name"], [int(d) for d in spec["shape"]], spec["datatype"])
    infer_input.set_data_from_numpy(input_array(spec))
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
    return serve_jobs(run, allow_single=True)


if __name__ == "__main__":
    sys.exit(main())
