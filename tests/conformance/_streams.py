"""What the stream scripts share (the recorders record_vllm_v*.py and the
derivations derive_*.py): the layout a stream file is written in, and the
loop that computes each stream's `steps` from its `settings` and
`requests` and writes them, or with --check compares them and shows the
first step that differs. After writing, run `deno fmt tests/conformance`
(the repository's format)."""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Callable


def dump(stream: dict) -> str:
    """JSON with one line per request and per step, so that a reader can
    follow a stream step by step."""
    order = ["family", "name", "description", "source", "settings", "requests", "max_steps", "steps", "notes"]
    keys = [k for k in order if k in stream] + [k for k in stream if k not in order]
    lines = ["{"]
    for i, k in enumerate(keys):
        v = stream[k]
        comma = "," if i < len(keys) - 1 else ""
        if k in ("requests", "steps") and isinstance(v, list):
            lines.append(f'  "{k}": [')
            for j, item in enumerate(v):
                lines.append("    " + json.dumps(item) + ("," if j < len(v) - 1 else ""))
            lines.append("  ]" + comma)
        else:
            lines.append(f'  "{k}": ' + json.dumps(v) + comma)
    lines.append("}")
    return "\n".join(lines) + "\n"


def stream_files(family_dir: str, named: list[str]) -> list[str]:
    """The files named, or every stream of the family's folder."""
    return named or sorted(os.path.join(family_dir, f) for f in os.listdir(family_dir) if f.endswith(".json"))


def process_streams(
    files: list[str], steps_of: Callable[[dict], list], check: bool, source: dict | None = None
) -> int:
    """Computes each stream's steps and writes them (with `source`, when
    recorded), or with `check` compares them; returns the exit code."""
    verb = "recorded" if source else "derived"
    bad = 0
    for path in files:
        with open(path) as fh:
            stream = json.load(fh)
        steps = steps_of(stream)
        if check:
            want = stream.get("steps") or []
            if steps != want:
                bad += 1
                print(f"DIFFERS: {path}")
                for a, b in zip(steps, want):
                    if a != b:
                        print(f"  step {a['step']}: engine {json.dumps(a)}\n  step {b.get('step')}: file   {json.dumps(b)}")
                        break
                if len(steps) != len(want):
                    print(f"  engine ran {len(steps)} steps, file has {len(want)}")
            else:
                print(f"same: {os.path.basename(path)} ({len(steps)} steps)")
            continue
        if source:
            stream["source"] = source
        stream["steps"] = steps
        with open(path, "w") as fh:
            fh.write(dump(stream))
        print(f"{verb}: {os.path.basename(path)} ({len(steps)} steps)")
    if check:
        print(f"{len(files) - bad} passed, {bad} failed")
    return 1 if bad else 0


def derive_main(doc: str, family_dir: str, derive: Callable[[dict], list]) -> int:
    """The command line of a derivation script: derives (or with --check compares) the steps of each stream file."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    return process_streams(stream_files(family_dir, args.files), derive, args.check)


def record_main(doc: str, family_dir: str, script: str, prepare: Callable[[], None], recorder: Callable[[dict], Any]) -> int:
    """The command line of a recorder (record_vllm_v*.py): runs the engine's own scheduler from a source tree on each
    stream file and writes its steps (or with --check compares them). `prepare` installs what the tree needs to import
    (stubs for modules it never uses) before the tree goes on the path; `recorder(settings).run(stream)` gives the
    steps."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vllm-src", required=True, help="a vLLM source tree (the folder holding vllm/)")
    ap.add_argument("--commit", required=True, help="the vLLM commit that tree is (written into source)")
    ap.add_argument("--version-note", default="", help="free text written into source.version")
    ap.add_argument("--check", action="store_true", help="compare with the files instead of writing them")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()

    prepare()
    sys.path.insert(0, os.path.abspath(args.vllm_src))
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
    source = {
        "kind": "recorded",
        "engine": "vllm",
        "repo": "vllm-project/vllm",
        "commit": args.commit,
        "version": args.version_note,
        "script": script,
    }
    steps_of = lambda stream: recorder(stream["settings"]).run(stream)  # noqa: E731
    return process_streams(stream_files(family_dir, args.files), steps_of, args.check, source)
