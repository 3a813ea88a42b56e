#!/bin/bash
# LOST: a page wrapped whole in one <form> (ASP.NET WebForms / SharePoint's aspnetForm) that also holds
# the site's search box is dropped as "a form with a search box": "unreadable file: no text", even with <main>.
. "$(dirname "$0")/lib_parse.sh"; D=$(mktemp -d); trap 'rm -rf "$D"' EXIT
cat > "$D/p.html" <<'H'
<html><head><title>Refund policy</title></head><body>
<form id="aspnetForm" method="post" action="/policy.aspx">
<header><div role="search"><input type="text" name="q" title="Search this site"></div></header>
<main><h1>Refund policy</h1><p>Refunds are given within thirty days of purchase.</p></main>
</form></body></html>
H
t=$(parse_text "$D/p.html"); echo "parsed: $t"
grep -q "thirty days" <<<"$t" || exit 1
