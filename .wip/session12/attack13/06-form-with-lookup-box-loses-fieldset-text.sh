#!/bin/bash
# LOST: a claim form's fieldset explanation ("Enter the serial number printed under the battery")
# is dropped when the same form also holds an <input type="search"> (a model lookup), not a site search.
. "$(dirname "$0")/lib_parse.sh"; D=$(mktemp -d); trap 'rm -rf "$D"' EXIT
printf '<html><head><title>T</title></head><body><main><h1>Claim</h1><form action="/claim"><fieldset><legend>Your device</legend><p>Enter the serial number printed under the battery.</p><input name="serial"></fieldset><input type="search" name="lookup" placeholder="Find model"></form></main></body></html>' > "$D/p.html"
t=$(parse_text "$D/p.html"); echo "parsed: $t"
grep -q "serial number" <<<"$t" || exit 1
