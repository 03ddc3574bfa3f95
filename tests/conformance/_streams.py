"""What the derivation scripts share: the command line that derives each
stream's `steps` from its `settings` and `requests` (or, with --check,
compares), over the files named or every stream of a family's folder.
After writing, run `deno fmt tests/conformance` (the repository's format)."""
from __future__ import annotations

import argparse
import json
import os
from typing import Callable


def derive_main(doc: str, family_dir: str, derive: Callable[[dict], list]) -> int:
    """Derives (or with --check compares) the steps of each stream file; returns the exit code."""
    from record_vllm_v1 import dump
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    files = args.files or sorted(os.path.join(family_dir, f) for f in os.listdir(family_dir) if f.endswith(".json"))
    bad = 0
    for path in files:
        with open(path) as fh:
            stream = json.load(fh)
        steps = derive(stream)
        if args.check:
            if steps != stream.get("steps"):
                bad += 1
                print(f"DIFFERS: {path}")
            continue
        stream["steps"] = steps
        with open(path, "w") as fh:
            fh.write(dump(stream))
        print(f"derived: {os.path.basename(path)} ({len(steps)} steps)")
    if args.check:
        print(f"{len(files) - bad} passed, {bad} failed")
    return 1 if bad else 0
