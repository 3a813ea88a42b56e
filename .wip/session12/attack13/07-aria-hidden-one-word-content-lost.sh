#!/bin/bash
# LOST: one-word content under aria-hidden="true" is taken for an icon: a collapsed FAQ answer
# paragraph "Yes." and a table cell value vanish (the answer to "Is it waterproof?" is gone).
. "$(dirname "$0")/lib_parse.sh"; D=$(mktemp -d); trap 'rm -rf "$D"' EXIT
printf '<html><head><title>T</title></head><body><main><h1>FAQ</h1><h2>Is the X40 waterproof?</h2><div class="panel" aria-hidden="true"><p>Yes.</p></div><h2>Specs</h2><table><tr><th>Model</th><th>IP rating</th></tr><tr><td>X40</td><td><div class="collapse" aria-hidden="true">IP68</div></td></tr></table></main></body></html>' > "$D/p.html"
t=$(parse_text "$D/p.html"); echo "parsed: $t"
grep -q "Yes" <<<"$t" && grep -q "IP68" <<<"$t" || exit 1
