#!/bin/bash
# LOST: collapsed/inactive content marked with the `hidden` attribute is dropped, although aria-hidden
# panels and tabs are kept: Docusaurus renders inactive <Tabs> panels as <div role="tabpanel" hidden>
# (the Windows install steps vanish), and hidden="until-found" sections (revealed by find-in-page) too.
. "$(dirname "$0")/lib_parse.sh"; D=$(mktemp -d); trap 'rm -rf "$D"' EXIT
cat > "$D/p.html" <<'H'
<html><head><title>Install</title></head><body><main><h1>Install</h1>
<div class="tabs-container"><ul role="tablist"><li role="tab" aria-selected="true">Linux</li><li role="tab" aria-selected="false">Windows</li></ul>
<div class="margin-top--md"><div role="tabpanel" class="tabItem_Ymn6"><p>Run apt install acme on Linux.</p></div>
<div role="tabpanel" class="tabItem_Ymn6" hidden=""><p>Run the MSI installer on Windows.</p></div></div></div>
<h2>Torque</h2><div hidden="until-found"><p>Tighten to forty newton metres.</p></div>
</main></body></html>
H
t=$(parse_text "$D/p.html"); echo "parsed: $t"
grep -q "MSI installer" <<<"$t" && grep -q "forty newton" <<<"$t" || exit 1
