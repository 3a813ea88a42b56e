#!/bin/bash
# WRONG (chrome leaks): an open cookie-consent modal (role="dialog" aria-modal="true") is kept and
# becomes the first passage of the page, although the README says a modal is dropped.
. "$(dirname "$0")/lib_parse.sh"; D=$(mktemp -d); trap 'rm -rf "$D"' EXIT
printf '<html><head><title>T</title></head><body><div id="cookie-notice" role="dialog" aria-modal="true" aria-label="Cookie consent"><p>We use cookies to improve your experience. Accept all cookies?</p><button>Accept</button></div><h1>Refunds</h1><p>Refunds take thirty days.</p></body></html>' > "$D/p.html"
t=$(parse_text "$D/p.html"); echo "parsed: $t"
grep -q "cookies" <<<"$t" && exit 1; exit 0
