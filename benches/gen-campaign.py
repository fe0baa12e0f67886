#!/usr/bin/env python3
"""Generate a large, realistic, sealed exhibit campaign from a seed.

    benches/gen-campaign.py OUT [--pages N] [--records M] [--artifact-mb MB]
                            [--seed S] [--plain] [--leaks]

OUT becomes one campaign folder: N pages of prose with a 20 x 6 Markdown
table each; unless --plain, each page also has one `exhibit table` and one
`exhibit chart` over its own JSONL data file of M records; artifact logs of
MB megabytes in total (files of at most 64 MB); and a manifest.json over all
of it, written the way `exhibit seal` writes it. The same arguments always
give byte-identical files. --markdown-only DIR writes just the pages' plain
Markdown (front matter for Hugo) to DIR instead, for peer benchmarks.
"""

import argparse
import hashlib
import json
import os
import random

WORDS = (
    "decode prefill throughput latency median context cell arm baseline "
    "native linux windows wsl request token cache batch kernel driver gate "
    "retained failure endurance sweep measured configuration served model "
    "revision image digest quality needle routed output control window "
    "result change ratio figure steady warm cold run repeat sample stack"
).split()


def sentence(rng):
    n = rng.randint(8, 18)
    words = [rng.choice(WORDS) for _ in range(n)]
    words[0] = words[0].capitalize()
    if rng.random() < 0.4:
        words.insert(rng.randint(1, n - 1), f"{rng.uniform(10, 400):.2f} tok/s")
    return " ".join(words) + "."


def paragraph(rng, sentences):
    return " ".join(sentence(rng) for _ in range(sentences))


def markdown_table(rng):
    head = "| Case | Context | Before tok/s | After tok/s | Runs | Note |"
    rule = "| --- | ---: | ---: | ---: | ---: | --- |"
    rows = []
    for i in range(20):
        before = rng.uniform(60, 160)
        rows.append(
            f"| case-{i:02d} | {rng.choice([4096, 8192, 32768, 65536, 131072])} | "
            f"{before:.2f} | {before * rng.uniform(0.9, 1.4):.2f} | "
            f"{rng.randint(3, 9)} | {rng.choice(WORDS)} {rng.choice(WORDS)} |"
        )
    return "\n".join([head, rule, *rows])


def page_markdown(rng, i, plain):
    parts = [f"## Cell group {i}", paragraph(rng, 5), paragraph(rng, 4), markdown_table(rng)]
    if not plain:
        data = f"data/page-{i:04d}.jsonl"
        parts.append(
            "```exhibit table\n"
            + json.dumps(
                {
                    "caption": f"Cells of group {i}",
                    "source": data,
                    "columns": [
                        {"header": "Case", "field": "case"},
                        {"header": "Context", "field": "context", "format": ","},
                        {"header": "Before tok/s", "field": "before", "format": ".2"},
                        {"header": "After tok/s", "field": "after", "format": ".2"},
                        {"header": "Change", "derive": "pct_change", "from": "before",
                         "to": "after", "format": "+.1%"},
                    ],
                },
                indent=2,
            )
            + "\n```"
        )
        parts.append(
            "```exhibit chart\n"
            + json.dumps(
                {
                    "title": f"Decode by case, group {i}",
                    "source": data,
                    "x": {"field": "case", "label": "Case"},
                    "y": {"label": "Decode (tok/s)"},
                    "series": [
                        {"field": "before", "name": "Before"},
                        {"field": "after", "name": "After"},
                    ],
                },
                indent=2,
            )
            + "\n```"
        )
    parts.append(paragraph(rng, 3))
    return "\n\n".join(parts) + "\n"


def records(rng, m):
    out = []
    for r in range(m):
        before = rng.uniform(60, 160)
        out.append(json.dumps({
            "case": f"c{r:03d}",
            "context": rng.choice([4096, 8192, 32768, 65536, 131072]),
            "before": round(before, 2),
            "after": round(before * rng.uniform(0.9, 1.4), 2),
            "n": rng.randint(3, 9),
        }))
    return "\n".join(out) + "\n"


def write_logs(rng, folder, total_bytes, leaks=False):
    os.makedirs(folder, exist_ok=True)
    # A pool of varied lines, written in shuffled blocks: fast, and still
    # text a scanner has to read through. With leaks, one line in 64 names
    # a private peer address, so copies must be redacted.
    pool = [
        f"2026-09-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00Z "
        f"INFO request={rng.getrandbits(64):016x} prompt_tokens={rng.randint(16, 8192)} "
        f"decode={rng.uniform(40, 180):.2f} tok/s status=200"
        + (f" peer=10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
           if leaks and i % 64 == 0 else "")
        + "\n"
        for i in range(4096)
    ]
    block = "".join(pool).encode()
    limit = 64 << 20
    n, left = 0, total_bytes
    while left > 0:
        size = min(left, limit)
        with open(os.path.join(folder, f"run-{n:03d}.log"), "wb") as f:
            written = 0
            while written < size:
                chunk = block[: size - written]
                f.write(chunk)
                written += len(chunk)
        left -= size
        n += 1


def seal(root):
    files = []
    for dirpath, _, names in os.walk(root):
        for name in names:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            if rel == "manifest.json":
                continue
            h = hashlib.sha256()
            with open(full, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            files.append({"path": rel, "sha256": h.hexdigest(), "bytes": os.path.getsize(full)})
    files.sort(key=lambda f: f["path"])
    with open(os.path.join(root, "manifest.json"), "w") as f:
        f.write(json.dumps({"files": files}, indent=2) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--pages", type=int, default=200)
    ap.add_argument("--records", type=int, default=12)
    ap.add_argument("--artifact-mb", type=float, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--plain", action="store_true", help="no exhibit blocks or data files")
    ap.add_argument("--leaks", action="store_true",
                    help="plant private addresses in the logs (one line in 64)")
    ap.add_argument("--markdown-only", action="store_true",
                    help="write only the pages, with Hugo front matter, to OUT/content")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    os.makedirs(a.out, exist_ok=True)
    if a.markdown_only:
        content = os.path.join(a.out, "content")
        os.makedirs(content, exist_ok=True)
        for i in range(a.pages):
            with open(os.path.join(content, f"page-{i:04d}.md"), "w") as f:
                f.write(f'---\ntitle: "Cell group {i}"\n---\n\n' + page_markdown(rng, i, True))
        return
    cid = os.path.basename(os.path.normpath(a.out)).lower()
    pages = []
    for i in range(a.pages):
        name = "index.md" if i == 0 else f"page-{i:04d}.md"
        pages.append({"file": name, "title": f"Cell group {i}"})
        with open(os.path.join(a.out, name), "w") as f:
            f.write(page_markdown(rng, i, a.plain))
        if not a.plain:
            os.makedirs(os.path.join(a.out, "data"), exist_ok=True)
            with open(os.path.join(a.out, f"data/page-{i:04d}.jsonl"), "w") as f:
                f.write(records(rng, a.records))
    meta = {
        "id": cid,
        "title": f"Generated campaign ({a.pages} pages, seed {a.seed})",
        "date": "2026-12-01",
        "state": "Completed",
        "scope": f"{a.pages} cell groups, {a.records} cases each",
        "decision": "No change",
        "pages": pages,
    }
    with open(os.path.join(a.out, "campaign.json"), "w") as f:
        f.write(json.dumps(meta, indent=2) + "\n")
    if a.artifact_mb > 0:
        write_logs(rng, os.path.join(a.out, "artifacts"), int(a.artifact_mb * (1 << 20)), a.leaks)
    seal(a.out)


if __name__ == "__main__":
    main()
