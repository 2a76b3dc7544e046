#!/usr/bin/env python3
"""The table of docs/PERFORMANCE.md ("Defaults against the best") from the
JSON that `ballcl bench --sweep --json` writes, one file per model:

    tools/defaults_table.py seed.json bounce.json

One row per model and N: the untuned default (K and why), the tuned plan,
the best of the sweep, default / best, the longest launch of each, and the
verdict against the targets (the default within 10% of the best for the
seed model, 15% for bounce, and no launch over the budget). Exits 1 when a
row misses its target, 2 when a file cannot be read."""
import json
import sys

TARGET = {"seed": 1.10, "bounce": 1.15}
# The absolute targets for the untuned seed model on the H200.
H200_SEED_US = {10000: 0.0038, 100000: 0.012}


def config(c):
    if not c:
        return "-"
    v = c["variant"] or "base"
    return f"{v}, local {c['local']}, K {c['steps_per_launch']}"


def us(c):
    return f"{c['us_per_step']:.4g}" if c and c.get("us_per_step") else "-"


def main(paths):
    rows, misses, docs = [], 0, []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError) as exc:
            print(f"defaults_table: {path}: {exc}", file=sys.stderr)
            return 2
        docs.append(doc)
        model = doc["model"]
        dev = doc["device"]["name"]
        for x in doc["defaults_sweep"]:
            d, t, b = x["default"], x.get("tuned"), x["best"]
            ratio = x["default_over_best"]
            limit = TARGET.get(model, 1.10)
            over = d["over_budget"] or (d["max_launch_ms"] > x["launch_budget_ms"])
            ok = ratio is not None and ratio <= limit and not over
            misses += not ok
            rows.append(
                f"| {model} | {x['balls']:.0e} | {x['steps']} | {d['steps_per_launch']} "
                f"({d['k_reason']}) | {us(d)} | {us(t)} | {config(b)} | {us(b)} | "
                f"{ratio:.3f} | {d['max_launch_ms']:.3g} / {b['max_launch_ms'] if b else 0:.3g} | "
                f"{'yes' if ok else 'NO'} (≤ {limit:.2f}) |")
    print(f"Device: {dev}; {doc['date']}; device µs per step, median of {doc['repeats']} runs")
    print()
    print("| model | N | S | default K (why) | default | tuned | best of the sweep | best "
          "| default / best | longest launch ms (default / best) | within target |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | --- |")
    for r in rows:
        print(r)
    # On the H200 the issue also names absolute figures for the seed model.
    if "H200" in dev:
        print()
        for doc in (d for d in docs if d["model"] == "seed"):
            for x in doc["defaults_sweep"]:
                limit = H200_SEED_US.get(x["balls"])
                if limit is None or not x["default"].get("us_per_step"):
                    continue
                got = x["default"]["us_per_step"]
                misses += got > limit
                print(f"H200, seed, N = {x['balls']}: default {got:.4g} us/step "
                      f"(at most {limit}: {'yes' if got <= limit else 'NO'})")
    return 1 if misses else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print("usage: tools/defaults_table.py MODEL.json [MODEL.json...]", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
