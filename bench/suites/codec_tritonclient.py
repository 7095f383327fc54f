"""NVIDIA's BYTES encoder, for the codec bench suite (bench/suites/codec.ts): times
tritonclient.utils.serialize_byte_tensor on COUNT UTF-8 strings of LENGTH characters (the same
strings the Node arm encodes). Prints one JSON line: the median seconds per call over REPEATS.

    python codec_tritonclient.py COUNT LENGTH REPEATS
"""

import json
import sys
import time

import numpy as np
from tritonclient.utils import serialize_byte_tensor


def main():
    count, length, repeats = (int(value) for value in sys.argv[1:4])
    strings = np.array([f"s{i:0{length - 1}d}"[:length] for i in range(count)], dtype=np.object_)
    serialize_byte_tensor(strings)  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        serialize_byte_tensor(strings)
        times.append(time.perf_counter() - start)
    times.sort()
    print(json.dumps({"medianSeconds": times[len(times) // 2], "bytes": len(serialize_byte_tensor(strings).item())}))


if __name__ == "__main__":
    main()
