"""One closed-loop window of NVIDIA's tritonclient against a Triton-compatible server, for the unary
bench suite (bench/suites/unary.ts). Prints one JSON line: completed, elapsed, latencies' p50/p99 and
the process CPU time used in the window (and the system part of it).

    python unary_tritonclient.py aio|sync URL MODEL ELEMENTS CONCURRENCY SECONDS
"""

import asyncio
import json
import os
import sys
import threading
import time

import numpy as np


def summary(latencies, elapsed, cpu, system):
    latencies.sort()

    def pct(p):
        if not latencies:
            return None
        rank = max(0, min(len(latencies) - 1, -(-p * len(latencies) // 100) - 1))
        return latencies[int(rank)] * 1000

    return {
        "completed": len(latencies),
        "elapsedMs": elapsed * 1000,
        "cpuMs": cpu * 1000,
        "systemMs": system * 1000,
        "p50Ms": pct(50),
        "p99Ms": pct(99),
    }


def make_inputs(module, elements):
    tensor = module.InferInput("INPUT0", [1, elements], "FP32")
    tensor.set_data_from_numpy(np.random.rand(1, elements).astype(np.float32))
    return [tensor]


async def run_aio(url, model, elements, concurrency, seconds):
    import tritonclient.grpc.aio as grpcaio

    client = grpcaio.InferenceServerClient(url)
    inputs = make_inputs(grpcaio, elements)
    for _ in range(20):
        await client.infer(model, inputs)
    latencies = []
    cpu0 = time.process_time()
    system0 = os.times().system
    start = time.perf_counter()
    end = start + seconds

    async def worker():
        while time.perf_counter() < end:
            sent = time.perf_counter()
            await client.infer(model, inputs)
            latencies.append(time.perf_counter() - sent)

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu0
    system = os.times().system - system0
    await client.close()
    return summary(latencies, elapsed, cpu, system)


def run_sync(url, model, elements, concurrency, seconds):
    import tritonclient.grpc as grpcclient

    clients = [grpcclient.InferenceServerClient(url) for _ in range(concurrency)]
    inputs = make_inputs(grpcclient, elements)
    for _ in range(20):
        clients[0].infer(model, inputs)
    latencies = []
    lock = threading.Lock()
    cpu0 = time.process_time()
    system0 = os.times().system
    start = time.perf_counter()
    end = start + seconds

    def worker(client):
        mine = []
        while time.perf_counter() < end:
            sent = time.perf_counter()
            client.infer(model, inputs)
            mine.append(time.perf_counter() - sent)
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=worker, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu0
    system = os.times().system - system0
    for client in clients:
        client.close()
    return summary(latencies, elapsed, cpu, system)


def main():
    mode, url, model, elements, concurrency, seconds = sys.argv[1:7]
    args = (url, model, int(elements), int(concurrency), float(seconds))
    result = asyncio.run(run_aio(*args)) if mode == "aio" else run_sync(*args)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
