"""python -m benches.quality --locomo FILE --cosqa DIR [--quick] [--out DIR]

With neither file given, the data under ../shared/bench is used. Update detection on store
(benches/quality/updates.jsonl) and fact capture (benches/quality/capture.jsonl and
capture_dev2.jsonl, and capture_holdout2.jsonl when present) and keyword search in seven
languages (benches/quality/multilingual.jsonl) run with either; --updates-only,
--capture-only and --multilingual-only run just that part and put its section into the
report already in --out.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benches.quality import harness


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.quality", description=__doc__)
    parser.add_argument("--locomo", type=Path, help="a LoCoMo-format JSON file")
    parser.add_argument("--cosqa", type=Path, help="a CoSQA-format folder")
    parser.add_argument("--quick", action="store_true", help="a small subset (CI)")
    parser.add_argument(
        "--updates-only",
        action="store_true",
        help="only update detection, merged into the existing quality.json/quality.md",
    )
    parser.add_argument(
        "--capture-only",
        action="store_true",
        help="only fact capture, merged into the existing quality.json/quality.md",
    )
    parser.add_argument(
        "--multilingual-only",
        action="store_true",
        help="only keyword search beyond English, merged into the existing quality.json/quality.md",
    )
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "results")
    args = parser.parse_args(argv)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    if args.updates_only:
        fresh = harness.run_updates(quick=args.quick, log=log)
        result, text = harness.merge_updates(args.out, fresh)
    elif args.capture_only:
        result, text = harness.merge_capture(args.out, harness.run_capture(log=log))
    elif args.multilingual_only:
        result, text = harness.merge_multilingual(args.out, harness.run_multilingual(log=log))
    elif args.locomo is None and args.cosqa is None:
        result, text = harness.run_default(quick=args.quick, out_dir=args.out, log=log)
    else:
        result = harness.run(args.locomo, args.cosqa, quick=args.quick, log=log)
        text = harness.markdown(result)
        harness.write(args.out, result, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
