"""Safetensors read/write without the safetensors package (only /usr/bin/python3 + PyTorch are
needed): an 8-byte little-endian header length, a JSON header padded with spaces to a multiple of
8 bytes, then the raw little-endian tensors in header order."""
import json
import struct

import numpy as np
import torch


def write_safetensors(path, tensors, metadata=None):
    """tensors: ordered {name: tensor or array}; every value is stored as float32 (F32), the float64
    result rounded to nearest."""
    header = {}
    if metadata:
        header["__metadata__"] = metadata
    blobs = []
    offset = 0
    for name, value in tensors.items():
        if isinstance(value, torch.Tensor):
            value = value.detach().to(torch.float64).cpu().numpy()
        arr = np.ascontiguousarray(np.asarray(value, dtype=np.float64).astype("<f4"))
        raw = arr.tobytes()
        header[name] = {"dtype": "F32", "shape": list(arr.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in blobs:
            f.write(raw)


def read_safetensors(path):
    """{name: float64 tensor} of an F32 safetensors file (metadata dropped), in file order."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] != "F32":
            raise ValueError(f"{path}: tensor {name} is {info['dtype']}, expected F32")
        b, e = info["data_offsets"]
        arr = np.frombuffer(data[8 + n + b : 8 + n + e], dtype="<f4").reshape(info["shape"])
        out[name] = torch.from_numpy(arr.astype(np.float64))
    return out
