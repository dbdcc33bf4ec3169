"""Write every golden file under testdata/golden/ (see testdata/README.md):

    /usr/bin/python3 tools/golden/generate.py

kernels/<name>.safetensors + .json for every op of kernel_cases.py, outputs.safetensors of every
whole-model case of model_cases.py (from its committed config.json, model.safetensors and
inputs.json), and MANIFEST.json with the sha256 of all of them and of this generator. An existing
outputs.safetensors is compared first: if any value moves beyond the docs/formats.md tolerance the
generator stops and names it (pass --force to overwrite anyway). Needs PyTorch; float64 throughout,
one thread, so the same sources give the same bytes."""
import json
import os
import re
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ beside the sources the manifest hashes

from kernel_cases import KERNEL_CASES  # noqa: E402
from manifest import write_manifest  # noqa: E402
from model_cases import MODEL_CASES, model_outputs  # noqa: E402
from st_io import read_safetensors, write_safetensors  # noqa: E402

GOLDEN = os.path.normpath(os.path.join(HERE, "..", "..", "testdata", "golden"))
COMMAND = "/usr/bin/python3 tools/golden/generate.py"


def spec_json(spec):
    """Indented JSON with every list of numbers on one line ([2, 45, 4, 8])."""
    text = json.dumps(spec, indent=2)
    text = re.sub(r"\[[-0-9.e,\s]*\]", lambda m: "[" + ", ".join(m.group(0)[1:-1].split()).replace(",,", ",") + "]", text)
    return text + "\n"


def tolerance_ratio(name, got, want):
    """Worst |a − b| / (1e-4 + 1e-4·|b|) after float32 rounding; gradients scaled by max |b|."""
    a = got.to(torch.float32).to(torch.float64)
    scale = 1.0
    if name.startswith("grad."):
        m = want.abs().max().item()
        scale = 1 / m if m > 0 else 1.0
    return ((a - want).abs() * scale / (1e-4 + 1e-4 * (want * scale).abs())).max().item()


def compare_outputs(case, got, path):
    """Print, per case, how far the recomputed outputs are from the committed ones; return the
    names beyond tolerance."""
    want = read_safetensors(path)
    if list(want) != list(got):
        return [f"names differ: {sorted(set(want) ^ set(got))}"]
    bad, worst, differing, total = [], 0.0, 0, 0
    for n, w in want.items():
        if tuple(w.shape) != tuple(got[n].shape):
            bad.append(f"{n}: shape {list(got[n].shape)} vs {list(w.shape)}")
            continue
        r = tolerance_ratio(n, got[n], w)
        worst = max(worst, r)
        differing += int((got[n].to(torch.float32).to(torch.float64) != w).sum())
        total += w.numel()
        if not r <= 1:
            bad.append(f"{n}: {r:.2f}x the tolerance")
    print(f"  {case}: {differing} of {total} float32 values differ from the committed file; worst {worst:.3g}x the tolerance")
    return bad


def main(argv):
    force = "--force" in argv
    torch.set_num_threads(1)
    written, read = [], []
    os.makedirs(os.path.join(GOLDEN, "kernels"), exist_ok=True)
    print("kernel cases:")
    for name, make in KERNEL_CASES.items():
        spec, tensors = make()
        write_safetensors(os.path.join(GOLDEN, "kernels", f"{name}.safetensors"), tensors)
        with open(os.path.join(GOLDEN, "kernels", f"{name}.json"), "w") as f:
            f.write(spec_json(spec))
        written += [f"kernels/{name}.safetensors", f"kernels/{name}.json"]
        print(f"  {name}: {len(tensors)} tensors")
    print("whole-model cases (recomputed outputs against the committed ones):")
    failures = []
    for case in MODEL_CASES:
        folder = os.path.join(GOLDEN, case)
        got = model_outputs(folder)
        out = os.path.join(folder, "outputs.safetensors")
        if os.path.exists(out):
            bad = compare_outputs(case, got, out)
            if bad and not force:
                failures += [f"{case}/{b}" for b in bad]
                continue
        write_safetensors(out, got)
        written.append(f"{case}/outputs.safetensors")
        read += [f"{case}/config.json", f"{case}/model.safetensors", f"{case}/inputs.json"]
    if failures:
        print("not written (beyond tolerance; --force overwrites):\n  " + "\n  ".join(failures))
        return 1
    write_manifest(GOLDEN, written, read, COMMAND)
    print(f"wrote {len(written)} files and MANIFEST.json under testdata/golden/")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
