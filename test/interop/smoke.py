#!/usr/bin/env python3
"""Smoke test of triton_server.py using the official tritonclient (gRPC).

Usage: smoke.py --url 127.0.0.1:<grpc-port> [--token infergate-test-token]
Prints one line per check and `N passed, N failed` at the end; exit 1 on failure.
"""

from __future__ import annotations

import argparse
import queue
import sys
import time
import traceback
from functools import partial

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.utils.shared_memory as shm
from tritonclient.utils import InferenceServerException

DTYPES = {
    "bool": ("BOOL", np.array([True, False, True], dtype=np.bool_)),
    "uint8": ("UINT8", np.array([0, 1, 255], dtype=np.uint8)),
    "uint16": ("UINT16", np.array([0, 1, 65535], dtype=np.uint16)),
    "uint32": ("UINT32", np.array([0, 1, 2**32 - 1], dtype=np.uint32)),
    "uint64": ("UINT64", np.array([0, 1, 2**64 - 1], dtype=np.uint64)),
    "int8": ("INT8", np.array([-128, 0, 127], dtype=np.int8)),
    "int16": ("INT16", np.array([-32768, 0, 32767], dtype=np.int16)),
    "int32": ("INT32", np.array([-(2**31), 0, 2**31 - 1], dtype=np.int32)),
    "int64": ("INT64", np.array([-(2**63), 0, 2**63 - 1], dtype=np.int64)),
    "fp16": ("FP16", np.array([-1.5, 0.0, 65504.0], dtype=np.float16)),
    "fp32": ("FP32", np.array([-1.5, 0.0, 3.4e38], dtype=np.float32)),
    "fp64": ("FP64", np.array([-1.5, 0.0, 1e308], dtype=np.float64)),
    "bytes": ("BYTES", np.array([b"", b"hello", b"\x00\xff"], dtype=np.object_)),
}

results: list[tuple[str, bool, str]] = []


def check(name):
    def deco(fn):
        try:
            detail = fn() or ""
            results.append((name, True, detail))
            print(f"PASS {name} {detail}", flush=True)
        except Exception as e:  # noqa: BLE001
            results.append((name, False, repr(e)))
            print(f"FAIL {name}: {e!r}", flush=True)
            traceback.print_exc(file=sys.stderr)
        return fn

    return deco


def expect_error(fn, *needles):
    try:
        fn()
    except InferenceServerException as e:
        msg = f"{e.status()} {e.message()}"
        for n in needles:
            assert n in msg, f"expected {n!r} in {msg!r}"
        return msg
    raise AssertionError("expected an error")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--token", default="infergate-test-token")
    args = ap.parse_args()
    c = grpcclient.InferenceServerClient(url=args.url)
    # gRPC: Triton prefixes restricted-protocol keys with "triton-grpc-protocol-"
    auth = {"triton-grpc-protocol-triton-access-token": args.token}

    @check("server live/ready/metadata")
    def _():
        assert c.is_server_live() and c.is_server_ready()
        md = c.get_server_metadata()
        return f"version={md.version}"

    for suffix, (dt, arr) in DTYPES.items():

        @check(f"identity_{suffix}")
        def _(suffix=suffix, dt=dt, arr=arr):
            inp = grpcclient.InferInput("INPUT0", list(arr.shape), dt)
            inp.set_data_from_numpy(arr)
            r = c.infer(f"identity_{suffix}", [inp])
            out = r.as_numpy("OUTPUT0")
            assert out.shape == arr.shape, out.shape
            assert r.get_output("OUTPUT0").datatype == dt, r.get_output("OUTPUT0").datatype
            assert list(out) == list(arr), (out, arr)

    @check("identity_fp32_batched [2,3]")
    def _():
        arr = np.arange(6, dtype=np.float32).reshape(2, 3)
        inp = grpcclient.InferInput("INPUT0", [2, 3], "FP32")
        inp.set_data_from_numpy(arr)
        out = c.infer("identity_fp32_batched", [inp]).as_numpy("OUTPUT0")
        assert (out == arr).all()

    @check("add_sub")
    def _():
        a = np.arange(16, dtype=np.float32).reshape(1, 16)
        b = np.ones((1, 16), dtype=np.float32)
        i0 = grpcclient.InferInput("INPUT0", [1, 16], "FP32")
        i1 = grpcclient.InferInput("INPUT1", [1, 16], "FP32")
        i0.set_data_from_numpy(a)
        i1.set_data_from_numpy(b)
        r = c.infer("add_sub", [i0, i1])
        assert (r.as_numpy("OUTPUT0") == a + b).all() and (r.as_numpy("OUTPUT1") == a - b).all()

    def slow_input():
        i = grpcclient.InferInput("INPUT0", [1, 1], "FP32")
        i.set_data_from_numpy(np.array([[1.0]], dtype=np.float32))
        return i

    @check("slow_queue overflow -> Exceeds maximum queue size")
    def _():
        outcomes: queue.Queue = queue.Queue()
        n = 8
        for _ in range(n):
            c.async_infer("slow_queue", [slow_input()], callback=lambda result, error: outcomes.put(error))
        errs = [outcomes.get(timeout=30) for _ in range(n)]
        msgs = [f"{e.status()} {e.message()}" for e in errs if e is not None]
        assert msgs, "no request was rejected"
        assert all("Exceeds maximum queue size" in m for m in msgs), msgs
        return f"{len(msgs)}/{n} rejected; e.g. {msgs[0]!r}"

    @check("slow_queue timeout parameter -> rejected in queue")
    def _():
        outcomes: queue.Queue = queue.Queue()
        # One request executes and one is staged for the instance by the dynamic
        # batcher, so two busy requests are needed before one really waits in the queue.
        for _ in range(2):
            c.async_infer("slow_queue", [slow_input()], callback=lambda result, error: outcomes.put(("busy", error)))
        time.sleep(0.05)
        c.async_infer(
            "slow_queue", [slow_input()], callback=lambda result, error: outcomes.put(("timed", error)), timeout=1000
        )
        got = dict(outcomes.get(timeout=30) for _ in range(3))
        assert got["busy"] is None, got["busy"]
        assert got["timed"] is not None, "timeout=1000us request succeeded"
        return f"{got['timed'].status()} {got['timed'].message()!r}"

    @check("slow_queue priority=1 accepted")
    def _():
        c.infer("slow_queue", [slow_input()], priority=1)

    @check("repeat (decoupled stream) IN=3")
    def _():
        q: queue.Queue = queue.Queue()
        c.start_stream(callback=lambda result, error: q.put((result, error)))
        try:
            i = grpcclient.InferInput("IN", [1], "INT32")
            i.set_data_from_numpy(np.array([3], dtype=np.int32))
            c.async_stream_infer("repeat", [i], request_id="r1", enable_empty_final_response=True)
            got, final = [], None
            while final is None:
                res, err = q.get(timeout=20)
                assert err is None, err
                resp = res.get_response()
                is_final = resp.parameters["triton_final_response"].bool_param
                if resp.outputs:
                    got.append(int(res.as_numpy("OUT")[0]))
                if is_final:
                    final = resp
            assert got == [0, 1, 2], got
            assert not final.outputs, "final flag came with outputs"
            return f"outputs={got}, then empty final response id={final.id!r}"
        finally:
            c.stop_stream()

    @check("repeat IN=-1 -> error on stream")
    def _():
        q: queue.Queue = queue.Queue()
        c.start_stream(callback=lambda result, error: q.put((result, error)))
        try:
            i = grpcclient.InferInput("IN", [1], "INT32")
            i.set_data_from_numpy(np.array([-1], dtype=np.int32))
            c.async_stream_infer("repeat", [i])
            res, err = q.get(timeout=20)
            assert err is not None
            return repr(err.message()[:120])
        finally:
            c.stop_stream()

    @check("repeat via unary infer -> rejected (decoupled)")
    def _():
        i = grpcclient.InferInput("IN", [1], "INT32")
        i.set_data_from_numpy(np.array([1], dtype=np.int32))
        return expect_error(lambda: c.infer("repeat", [i]))[:160]

    @check("sequence_echo needs sequence_id")
    def _():
        def call(**kw):
            i = grpcclient.InferInput("INPUT0", [1, 1], "INT32")
            i.set_data_from_numpy(np.array([[7]], dtype=np.int32))
            return c.infer("sequence_echo", [i], **kw)

        m = expect_error(lambda: call())
        r = call(sequence_id=42, sequence_start=True)
        call(sequence_id=42, sequence_end=True)
        assert r.as_numpy("OUTPUT0")[0][0] == 7
        return f"no-id error: {m[:140]!r}"

    @check("identity_bf16 (plain python backend, DLPack)")
    def _():
        import ml_dtypes

        arr = np.array([1.5, -2.0, 0.0], dtype=ml_dtypes.bfloat16)
        inp = grpcclient.InferInput("INPUT0", [3], "BF16")
        inp.set_data_from_numpy(arr)
        r = c.infer("identity_bf16", [inp])
        raw = r.get_response().raw_output_contents[0]
        assert raw == arr.tobytes(), (raw, arr.tobytes())
        assert r.get_output("OUTPUT0").datatype == "BF16"

    @check("accumulate (sequence batching, control inputs)")
    def _():
        def step(seq, v, **kw):
            i = grpcclient.InferInput("INPUT0", [1, 1], "INT32")
            i.set_data_from_numpy(np.array([[v]], dtype=np.int32))
            return int(c.infer("accumulate", [i], sequence_id=seq, **kw).as_numpy("OUTPUT0")[0][0])

        a = [step(1001, 1, sequence_start=True), step(1002, 10, sequence_start=True), step(1001, 2), step(1002, 20)]
        a.append(step(1001, 3, sequence_end=True))
        a.append(step(1002, 30, sequence_end=True))
        assert a == [1, 10, 3, 30, 6, 60], a
        m = expect_error(lambda: step(1003, 5))
        return f"sums={a}; no START: {m[:120]!r}"

    @check("repository index / unload / load repo_identity (no token needed)")
    def _():
        idx = c.get_model_repository_index(as_json=True)
        names = {m["name"]: m.get("state") for m in idx["models"]}
        assert "repo_identity" in names and "add_sub" in names, names
        c.unload_model("repo_identity")
        deadline = time.time() + 30
        while c.is_model_ready("repo_identity") and time.time() < deadline:
            time.sleep(0.2)
        assert not c.is_model_ready("repo_identity")
        st = {m["name"]: m.get("state") for m in c.get_model_repository_index(as_json=True)["models"]}["repo_identity"]
        c.load_model("repo_identity")
        assert c.is_model_ready("repo_identity")
        return f"{len(names)} models in index; state after unload={st}"

    @check("statistics")
    def _():
        s = c.get_inference_statistics("add_sub", as_json=True)
        ms = s["model_stats"][0]
        return f"add_sub inference_count={ms.get('inference_count')}"

    @check("system shared memory register/infer/unregister")
    def _():
        arr = np.array([1.0, 2.0, 3.0], dtype=np.float32)
        h = shm.create_shared_memory_region("infergate_in", "/infergate_smoke_in", arr.nbytes)
        try:
            shm.set_shared_memory_region(h, [arr])
            c.unregister_system_shared_memory()
            c.register_system_shared_memory("infergate_in", "/infergate_smoke_in", arr.nbytes)
            st = c.get_system_shared_memory_status(as_json=True)
            inp = grpcclient.InferInput("INPUT0", [3], "FP32")
            inp.set_shared_memory("infergate_in", arr.nbytes)
            out = c.infer("identity_fp32", [inp]).as_numpy("OUTPUT0")
            assert (out == arr).all()
            c.unregister_system_shared_memory("infergate_in")
            return f"status={st}"
        finally:
            shm.destroy_shared_memory_region(h)

    @check("restricted 'logging' without token -> denied")
    def _():
        return expect_error(lambda: c.get_log_settings())[:160]

    @check("restricted 'logging' / 'trace' with triton-access-token header -> ok")
    def _():
        c.get_log_settings(headers=auth)
        c.get_trace_settings(headers=auth)

    @check("wrong token -> denied")
    def _():
        return expect_error(lambda: c.get_trace_settings(headers={"triton-grpc-protocol-triton-access-token": "nope"}))[:160]

    @check("model config / metadata")
    def _():
        cfg = c.get_model_config("slow_queue", as_json=True)["config"]
        md = c.get_model_metadata("repeat", as_json=True)
        return f"slow_queue dynamic_batching={cfg.get('dynamic_batching')} repeat inputs={[i['name'] for i in md['inputs']]}"

    c.close()
    passed = sum(1 for _, ok, _ in results if ok)
    failed = len(results) - passed
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
