"""Rebuild tools/travel/data/rail_stations.json from 12306's station_name.js.

    python scripts/refresh_stations.py station_name.js        # a file saved from the browser
    python scripts/refresh_stations.py --url URL               # fetch it (needs network)

station_name.js is one line: var station_names ='@bjb|北京北|VAP|beijingbei|bjb|0|0357|北京|||@...';
Each record is `|`-separated: short code, name, telecode, pinyin, initials, index, city code,
city name, and two empty fields. The output keeps name, telecode, pinyin, initials and city,
sorted by telecode so a refresh shows as a readable diff. Refuses a file with fewer than
3,000 stations (a truncated download or an error page would otherwise replace the table).
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.request
from pathlib import Path

OFFICIAL_URL = "https://kyfw.12306.cn/otn/resources/js/framework/station_name.js"
OUT = Path(__file__).resolve().parent.parent / "tools" / "travel" / "data" / "rail_stations.json"
MIN_STATIONS = 3000


def parse(text: str) -> list[list[str]]:
    """[name, telecode, pinyin, initials, city] per station; raises ValueError on a foreign file."""
    start, end = text.find("'"), text.rfind("'")
    if "station_names" not in text or start < 0 or end <= start:
        raise ValueError("this is not station_name.js (no `var station_names = '...'`)")
    rows: dict[str, list[str]] = {}
    for record in text[start + 1 : end].split("@"):
        fields = record.split("|")
        if len(fields) < 8 or not fields[1] or len(fields[2]) != 3 or not fields[2].isupper():
            continue
        name, code, pinyin, initials, city = fields[1], fields[2], fields[3], fields[4], fields[7]
        rows[code] = [name, code, pinyin, initials, city or name]
    return [rows[c] for c in sorted(rows)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?", help="a saved station_name.js")
    ap.add_argument("--url", help=f"download from here instead (the official one is {OFFICIAL_URL})")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    if args.url:
        with urllib.request.urlopen(args.url, timeout=30) as resp:
            text = resp.read().decode("utf-8")
    elif args.file:
        text = Path(args.file).read_text(encoding="utf-8")
    else:
        ap.error("give a file or --url")
    try:
        rows = parse(text)
    except ValueError as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return 1
    if len(rows) < MIN_STATIONS:
        print(f"refused: only {len(rows)} stations (expected over {MIN_STATIONS}); the file looks truncated",
              file=sys.stderr)
        return 1
    body = ",\n".join(json.dumps(r, ensure_ascii=False) for r in rows)
    Path(args.out).write_text(f"[\n{body}\n]\n", encoding="utf-8")
    print(f"wrote {len(rows)} stations to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
