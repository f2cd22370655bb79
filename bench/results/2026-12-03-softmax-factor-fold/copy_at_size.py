"""Device-to-device copy bandwidth (bytes read + written) at bench's 1 GiB and at the
256 MiB a 2^26-element 16-bit row problem moves: median of 30 CUDA-event timings a size."""
import json
import sys

import torch

out = {}
for name, nbytes in (("copy_1GiB", 1 << 30), ("copy_128MiB", 128 << 20), ("copy_64MiB", 64 << 20)):
    a = torch.empty(nbytes, dtype=torch.uint8, device="cuda").fill_(1)
    b = torch.empty_like(a)
    for _ in range(3):
        b.copy_(a)
    times = []
    for _ in range(30):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        b.copy_(a)
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) * 1e3)
    times.sort()
    us = times[len(times) // 2]
    out[name] = {"bytes_moved": 2 * nbytes, "median_us": us, "gbps": 2 * nbytes / us / 1e3}
json.dump(out, open(sys.argv[1], "w"), indent=1)
print(json.dumps(out, indent=1))
