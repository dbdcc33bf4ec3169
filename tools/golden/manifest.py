"""The hash manifest (testdata/golden/MANIFEST.json): sha256 of every golden file, whether the
generator wrote it or read it (a whole-model case's config, weights and inputs), and of the
generator's own sources, so a test can tell that the committed files are the ones this generator
made (tools/test-support/golden-manifest.test.ts)."""
import hashlib
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def sha256_file(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def generator_sources():
    """{file name: sha256} of tools/golden/*.py, sorted, and one sha256 over that listing."""
    files = {n: sha256_file(os.path.join(HERE, n)) for n in sorted(os.listdir(HERE)) if n.endswith(".py")}
    listing = "".join(f"{h}  {n}\n" for n, h in files.items())
    return files, hashlib.sha256(listing.encode()).hexdigest()


def write_manifest(golden_root, written, read, command):
    """written / read: paths relative to golden_root."""
    files, combined = generator_sources()
    manifest = {
        "command": command,
        "generator": {"path": "tools/golden", "sha256": combined, "files": files},
        "written": {p: sha256_file(os.path.join(golden_root, p)) for p in sorted(written)},
        "read": {p: sha256_file(os.path.join(golden_root, p)) for p in sorted(read)},
    }
    path = os.path.join(golden_root, "MANIFEST.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
