# helper: parse_text FILE -> prints parsed text (empty if none)
ING=${ING:-/work/attack13/.venv/bin/ingest}
parse_text(){ "$ING" parse "$1" --json 2>/dev/null | python3 -c "import json,sys
try: print(json.load(sys.stdin).get('text') or '')
except Exception: print('')"; }
