#!/usr/bin/env python3
"""Real NVIDIA Triton Inference Server (CPU) for infergate interop tests.

Serves a fixed set of test models through PyTriton (which bundles the
`tritonserver` binary and runs each model in Triton's Python backend).
All endpoints bind to 127.0.0.1 only.

Prints exactly one line `READY grpc=<port> http=<port> metrics=<port>` to
stdout once every model is loaded and the server is ready; everything else
goes to stderr. Exits cleanly on SIGTERM / SIGINT.

Ports/options come from CLI flags, falling back to environment variables:
  --grpc-port      INFERGATE_TRITON_GRPC_PORT     (default 8001)
  --http-port      INFERGATE_TRITON_HTTP_PORT     (default 8000)
  --metrics-port   INFERGATE_TRITON_METRICS_PORT  (default 8002)
  --access-token   INFERGATE_TRITON_ACCESS_TOKEN  (default "infergate-test-token")
  --restricted-endpoints  INFERGATE_TRITON_RESTRICTED_ENDPOINTS
        comma-separated Triton endpoint groups guarded by the
        `triton-access-token` header (default "trace,logging";
        "" = nothing restricted; valid groups: health, metadata, inference,
        shared-memory, model-config, model-repository, statistics, trace, logging)
  --log-verbose    INFERGATE_TRITON_LOG_VERBOSE   (default 0)
  --otel-trace-url INFERGATE_TRITON_OTEL_TRACE_URL (default "" = Triton's own trace mode)
        OTLP/HTTP endpoint (e.g. http://127.0.0.1:4318/v1/traces): start Triton in OpenTelemetry
        trace mode, level TIMESTAMPS, rate 1, exporting every request's spans there (JSON)
  --models         INFERGATE_TRITON_MODELS        (default "" = every model)
        comma-separated model names to serve (fewer models start and stop faster)

See README.md in this folder for the model catalogue.
"""

from __future__ import annotations

import argparse
import logging
import os
import pathlib
import shutil
import signal
import sys
import threading
import time

import numpy as np

# --- sequence batching shim -------------------------------------------------
# PyTriton's ModelConfig has no `sequence_batching` field. PyTriton generates
# config.pbtxt in this process, so we add the block for the models named here.
# The backend proxy does not forward control tensors or the correlation ID to
# the Python callable, so such a model cannot keep per-sequence state; it only
# makes Triton enforce/validate sequence_id / sequence_start / sequence_end.
_SEQUENCE_MODELS = {"sequence_echo": {"maxSequenceIdleMicroseconds": "5000000"}}

from pytriton.model_config import generator as _generator  # noqa: E402

_orig_get_config = _generator.ModelConfigGenerator.get_config


def _get_config_with_sequence(self):
    cfg = _orig_get_config(self)
    extra = _SEQUENCE_MODELS.get(cfg.get("name"))
    if extra is not None:
        cfg.pop("dynamic_batching", None)
        cfg["sequence_batching"] = dict(extra)
    return cfg


_generator.ModelConfigGenerator.get_config = _get_config_with_sequence

from pytriton.decorators import batch  # noqa: E402
from pytriton.model_config import DynamicBatcher, ModelConfig, QueuePolicy, Tensor  # noqa: E402
from pytriton.model_config.common import TimeoutAction  # noqa: E402
from pytriton.triton import Triton, TritonConfig, TritonLifecyclePolicy, TritonSecurityConfig  # noqa: E402
from pytriton.utils.workspace import Workspace  # noqa: E402

# Plain Triton Python-backend models (not PyTriton) copied into the model store:
# repo_identity, identity_bf16, accumulate. See models/ and README.md.
PLAIN_MODELS_DIR = pathlib.Path(__file__).resolve().parent / "models"
# The server-side pipeline examples (an ensemble needs its composing models in a repository).
EXAMPLE_MODELS_DIR = pathlib.Path(__file__).resolve().parents[2] / "examples" / "triton-models"

HOST = "127.0.0.1"

# Triton datatype -> numpy dtype used by PyTriton (BYTES = np.bytes_, i.e. TYPE_STRING).
IDENTITY_DTYPES = {
    "bool": np.bool_,
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "fp16": np.float16,
    "fp32": np.float32,
    "fp64": np.float64,
    "bytes": np.bytes_,
}

SLOW_QUEUE_SLEEP_S = 0.2


def _log(msg: str) -> None:
    print(f"[triton_server] {msg}", file=sys.stderr, flush=True)


def identity(requests):
    return [{"OUTPUT0": r["INPUT0"]} for r in requests]


@batch
def add_sub(INPUT0, INPUT1):
    return {"OUTPUT0": INPUT0 + INPUT1, "OUTPUT1": INPUT0 - INPUT1}


@batch
def slow_queue(INPUT0):
    time.sleep(SLOW_QUEUE_SLEEP_S)
    return {"OUTPUT0": INPUT0}


def repeat(requests):
    """Decoupled: for IN=n send n responses OUT=[i] (i = 0..n-1), then the final flag.

    Optional DELAY_MS waits before each response. IN < 0 raises (error response).
    """
    if len(requests) != 1:
        raise ValueError(f"repeat expects one request per execution, got {len(requests)}")
    req = requests[0]
    count = int(req["IN"].reshape(-1)[0])
    delay_ms = int(req["DELAY_MS"].reshape(-1)[0]) if "DELAY_MS" in req else 0
    if count < 0:
        raise ValueError(f"repeat: IN must be >= 0, got {count}")
    for i in range(count):
        if delay_ms > 0:
            time.sleep(delay_ms / 1000.0)
        yield [{"OUT": np.array([i], dtype=np.int32)}]


GENERATE_DEFAULT_MAX_TOKENS = 16


def _flag(req, name: str, default: bool) -> bool:
    return bool(req[name].reshape(-1)[0]) if name in req else default


def _generate_words(prompt: str) -> list[str]:
    """The words the `generate` model replies with: those of the prompt's last line.

    Trailing blank lines and a trailing `assistant:` cue (formatChatPrompt's last line) are skipped,
    and a leading `<role>: ` is dropped, so `user: one two\nassistant:` -> ["one", "two"].
    """
    lines = [line.strip() for line in prompt.splitlines()]
    while lines and (lines[-1] == "" or lines[-1] == "assistant:"):
        lines.pop()
    if not lines:
        return []
    role, sep, rest = lines[-1].partition(": ")
    last = rest if sep and role.isidentifier() else lines[-1]
    return last.split()


def generate(requests):
    """Decoupled LLM stand-in with the vLLM/TensorRT-LLM `text_input`/`text_output` convention.

    Replies with the words of the prompt's last line (see _generate_words), one token per word,
    cut at `max_tokens` (default 16) and before the first occurrence of any `stop_words` string.
    stream=True: one response per token with the delta text (" word" after the first), then the
    final flag; stream=False: one response with the whole text (the prompt prepended unless
    exclude_input_in_output). `finish_reason` ("length" | "stop"; "None" on earlier responses),
    `num_input_tokens` (whitespace words of the prompt) and `num_output_tokens` (tokens in this
    response) are sent when the matching return_* input is true. Request parameter `delay_ms` (int)
    sleeps before each token. `temperature` is accepted and ignored; max_tokens < 1 is an error.
    """
    if len(requests) != 1:
        raise ValueError(f"generate expects one request per execution, got {len(requests)}")
    req = requests[0]
    prompt = req["text_input"].reshape(-1)[0]
    prompt = prompt.decode("utf-8") if isinstance(prompt, bytes) else str(prompt)
    stream = _flag(req, "stream", False)
    exclude_input = _flag(req, "exclude_input_in_output", False)
    max_tokens = int(req["max_tokens"].reshape(-1)[0]) if "max_tokens" in req else GENERATE_DEFAULT_MAX_TOKENS
    if max_tokens < 1:
        raise ValueError(f"generate: max_tokens must be at least 1, got {max_tokens}")
    stop_words = []
    if "stop_words" in req:
        for item in req["stop_words"].reshape(-1):
            word = item.decode("utf-8") if isinstance(item, bytes) else str(item)
            if word:
                stop_words.append(word)
    want_input_tokens = _flag(req, "return_num_input_tokens", False)
    want_output_tokens = _flag(req, "return_num_output_tokens", False)
    want_finish = _flag(req, "return_finish_reason", False)
    params = req.parameters or {}
    delay_s = max(0, int(params.get("delay_ms", 0))) / 1000.0

    # Plan the reply: (delta, token count) pieces and the finish reason.
    words = _generate_words(prompt)
    pieces: list[str] = []
    finish = "stop"
    text = ""
    for index, word in enumerate(words):
        if index == max_tokens:
            finish = "length"
            break
        piece = word if index == 0 else f" {word}"
        candidate = text + piece
        hits = [at for at in (candidate.find(stop) for stop in stop_words) if at >= 0]
        if hits:
            cut = candidate[len(text) : min(hits)]
            if cut:
                pieces.append(cut)
            finish = "stop"
            break
        pieces.append(piece)
        text = candidate

    def response(delta: str, tokens: int, last: bool) -> dict:
        out = {"text_output": np.array([delta.encode("utf-8")], dtype=np.object_)}
        if want_input_tokens:
            out["num_input_tokens"] = np.array([len(prompt.split())], dtype=np.int32)
        if want_output_tokens:
            out["num_output_tokens"] = np.array([tokens], dtype=np.int32)
        if want_finish:
            out["finish_reason"] = np.array([(finish if last else "None").encode()], dtype=np.object_)
        return out

    if not stream:
        for _ in pieces:
            if delay_s > 0:
                time.sleep(delay_s)
        whole = "".join(pieces)
        if not exclude_input:
            whole = prompt + whole
        yield [response(whole, len(pieces), last=True)]
        return
    if not pieces:
        yield [response("", 0, last=True)]
        return
    for index, piece in enumerate(pieces):
        if delay_s > 0:
            time.sleep(delay_s)
        yield [response(piece, 1, last=index == len(pieces) - 1)]


def sequence_echo(requests):
    return [{"OUTPUT0": r["INPUT0"]} for r in requests]


def bind_models(triton: Triton, only: set[str] | None = None) -> None:
    """Bind the PyTriton models; with `only`, just those named there."""

    def bind(**kwargs) -> None:
        if only is None or kwargs["model_name"] in only:
            triton.bind(**kwargs)

    for suffix, dtype in IDENTITY_DTYPES.items():
        bind(
            model_name=f"identity_{suffix}",
            infer_func=identity,
            inputs=[Tensor(name="INPUT0", dtype=dtype, shape=(-1,))],
            outputs=[Tensor(name="OUTPUT0", dtype=dtype, shape=(-1,))],
            config=ModelConfig(batching=False),
            strict=True,
        )

    # Batched identity: full shape is [batch(<=8), N].
    bind(
        model_name="identity_fp32_batched",
        infer_func=identity,
        inputs=[Tensor(name="INPUT0", dtype=np.float32, shape=(-1,))],
        outputs=[Tensor(name="OUTPUT0", dtype=np.float32, shape=(-1,))],
        config=ModelConfig(batching=True, max_batch_size=8, batcher=DynamicBatcher()),
        strict=True,
    )

    bind(
        model_name="add_sub",
        infer_func=add_sub,
        inputs=[
            Tensor(name="INPUT0", dtype=np.float32, shape=(16,)),
            Tensor(name="INPUT1", dtype=np.float32, shape=(16,)),
        ],
        outputs=[
            Tensor(name="OUTPUT0", dtype=np.float32, shape=(16,)),
            Tensor(name="OUTPUT1", dtype=np.float32, shape=(16,)),
        ],
        config=ModelConfig(
            batching=True,
            max_batch_size=64,
            batcher=DynamicBatcher(max_queue_delay_microseconds=100),
        ),
        strict=True,
    )

    bind(
        model_name="slow_queue",
        infer_func=slow_queue,
        inputs=[Tensor(name="INPUT0", dtype=np.float32, shape=(-1,))],
        outputs=[Tensor(name="OUTPUT0", dtype=np.float32, shape=(-1,))],
        config=ModelConfig(
            batching=True,
            max_batch_size=1,
            batcher=DynamicBatcher(
                priority_levels=2,
                default_priority_level=2,
                default_queue_policy=QueuePolicy(
                    timeout_action=TimeoutAction.REJECT,
                    default_timeout_microseconds=10_000_000,  # 10 s; override needs a non-zero default (see README)
                    allow_timeout_override=True,
                    max_queue_size=2,
                ),
            ),
        ),
        strict=True,
    )

    bind(
        model_name="repeat",
        infer_func=repeat,
        inputs=[
            Tensor(name="IN", dtype=np.int32, shape=(1,)),
            Tensor(name="DELAY_MS", dtype=np.int32, shape=(1,), optional=True),
        ],
        outputs=[Tensor(name="OUT", dtype=np.int32, shape=(1,))],
        config=ModelConfig(batching=False, decoupled=True),
        strict=True,
    )

    # LLM stand-in for createTritonChatModel (text_input/text_output convention, vLLM/TRT-LLM style).
    bind(
        model_name="generate",
        infer_func=generate,
        inputs=[
            Tensor(name="text_input", dtype=np.bytes_, shape=(1,)),
            Tensor(name="stream", dtype=np.bool_, shape=(1,)),
            Tensor(name="exclude_input_in_output", dtype=np.bool_, shape=(1,), optional=True),
            Tensor(name="max_tokens", dtype=np.int32, shape=(1,), optional=True),
            Tensor(name="temperature", dtype=np.float32, shape=(1,), optional=True),
            Tensor(name="stop_words", dtype=np.bytes_, shape=(-1,), optional=True),
            Tensor(name="return_num_input_tokens", dtype=np.bool_, shape=(1,), optional=True),
            Tensor(name="return_num_output_tokens", dtype=np.bool_, shape=(1,), optional=True),
            Tensor(name="return_finish_reason", dtype=np.bool_, shape=(1,), optional=True),
        ],
        outputs=[
            Tensor(name="text_output", dtype=np.bytes_, shape=(-1,)),
            Tensor(name="num_input_tokens", dtype=np.int32, shape=(1,)),
            Tensor(name="num_output_tokens", dtype=np.int32, shape=(1,)),
            Tensor(name="finish_reason", dtype=np.bytes_, shape=(-1,)),
        ],
        config=ModelConfig(batching=False, decoupled=True),
        strict=True,
    )

    bind(
        model_name="sequence_echo",
        infer_func=sequence_echo,
        inputs=[Tensor(name="INPUT0", dtype=np.int32, shape=(1,))],
        outputs=[Tensor(name="OUTPUT0", dtype=np.int32, shape=(1,))],
        config=ModelConfig(batching=True, max_batch_size=1),
        strict=True,
    )


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value else default


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--grpc-port", type=int, default=_env_int("INFERGATE_TRITON_GRPC_PORT", 8001))
    p.add_argument("--http-port", type=int, default=_env_int("INFERGATE_TRITON_HTTP_PORT", 8000))
    p.add_argument("--metrics-port", type=int, default=_env_int("INFERGATE_TRITON_METRICS_PORT", 8002))
    p.add_argument(
        "--access-token", default=os.environ.get("INFERGATE_TRITON_ACCESS_TOKEN", "infergate-test-token")
    )
    p.add_argument(
        "--restricted-endpoints",
        default=os.environ.get("INFERGATE_TRITON_RESTRICTED_ENDPOINTS", "trace,logging"),
    )
    p.add_argument("--log-verbose", type=int, default=_env_int("INFERGATE_TRITON_LOG_VERBOSE", 0))
    p.add_argument("--otel-trace-url", default=os.environ.get("INFERGATE_TRITON_OTEL_TRACE_URL", ""))
    p.add_argument("--models", default=os.environ.get("INFERGATE_TRITON_MODELS", ""))
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    # tritonserver (a child process) inherits fd 1 and logs there; keep stdout
    # for the READY line only by pointing fd 1 at stderr for everything else.
    ready_out = os.fdopen(os.dup(1), "w", buffering=1)
    sys.stdout.flush()
    os.dup2(2, 1)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(asctime)s %(name)s %(levelname)s %(message)s")

    restricted = [e.strip() for e in args.restricted_endpoints.split(",") if e.strip()]
    security = TritonSecurityConfig(
        access_token=args.access_token if restricted else None,
        restricted_endpoints=restricted,
    )
    config = TritonConfig(
        http_address=HOST,
        http_port=args.http_port,
        grpc_address=HOST,
        grpc_port=args.grpc_port,
        metrics_address=HOST,
        metrics_port=args.metrics_port,
        allow_gpu_metrics=False,
        log_verbose=args.log_verbose,
        exit_timeout_secs=5,
    )

    stop = threading.Event()

    def _on_signal(signum, _frame):
        _log(f"received signal {signum}, shutting down")
        stop.set()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)

    only = {m.strip() for m in args.models.split(",") if m.strip()} or None

    started = time.monotonic()
    workspace = Workspace()  # temporary dir under ~/.cache/pytriton, removed by Triton.stop()
    for model_dir in sorted([*PLAIN_MODELS_DIR.iterdir(), *EXAMPLE_MODELS_DIR.iterdir()]):
        if (model_dir / "config.pbtxt").is_file() and (only is None or model_dir.name in only):
            shutil.copytree(model_dir, workspace.model_store_path / model_dir.name)

    # local_model_store=True: PyTriton writes each model (config.pbtxt + proxy
    # model.py) into its workspace model store instead of pushing it with a
    # load-with-override request, so the repository index lists the models and
    # a plain unload/load by name works.
    triton = Triton(
        config=config,
        workspace=workspace,
        security_config=security,
        triton_lifecycle_policy=TritonLifecyclePolicy(launch_triton_on_startup=True, local_model_store=True),
    )
    if args.otel_trace_url:
        # Only tritonserver gets --trace-config. Not through TritonConfig(trace_config=...): PyTriton
        # would then also trace inside every model proxy (configure_tracing, a proxy-side tracer),
        # which needs the opentelemetry-* Python packages (not pinned) and adds spans of its own.
        # `_triton_server_config` is built in Triton.__init__ and read when run() starts the server.
        # Triton's OTLP/HTTP exporter posts JSON (hex ids); bsp_schedule_delay=100 ms exports soon.
        triton._triton_server_config["trace_config"] = [
            "mode=opentelemetry",
            "level=TIMESTAMPS",
            "rate=1",
            f"opentelemetry,url={args.otel_trace_url}",
            "opentelemetry,bsp_schedule_delay=100",
        ]
    try:
        bind_models(triton, only)
        triton.run()  # starts tritonserver, loads every bound model, waits until ready
        elapsed = time.monotonic() - started
        _log(
            f"ready after {elapsed:.1f}s; restricted={restricted or 'none'}; "
            f"models={sorted(only) if only else 'all'}; otel={args.otel_trace_url or 'off'}"
        )
        ready_out.write(f"READY grpc={args.grpc_port} http={args.http_port} metrics={args.metrics_port}\n")
        ready_out.flush()
        while not stop.wait(0.5):
            if not triton.is_alive():
                _log("tritonserver or a model proxy died")
                return 1
    finally:
        # Triton.stop() can hang joining proxy threads (e.g. after a PyTriton model
        # was unloaded/reloaded); bound it and exit hard if needed.
        stopper = threading.Thread(target=triton.stop, name="triton-stop", daemon=True)
        stopper.start()
        stopper.join(20)
        if stopper.is_alive():
            _log("Triton.stop() did not finish within 20s; exiting anyway")
            sys.stderr.flush()
            os._exit(3)
        _log("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
