"""Sum the figures the fuzz shards wrote (`nox -s fuzz` prints this at the end)."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(report: str) -> int:
    path = Path(report)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    shards = [row for row in rows if "shard" in row]
    total = {
        key: sum(row[key] for row in shards) for key in ("cases", "failures", "internal_errors")
    }
    slowest = max((row["seconds"] for row in shards), default=0)
    print(
        f"fuzz: {total['cases']} cases in {len(shards)} shards, {total['failures']} failed "
        f"({total['internal_errors']} internal errors); slowest shard {slowest} s"
    )
    for row in rows:
        if "failure" in row:
            print("\n" + row["failure"][:2000])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
