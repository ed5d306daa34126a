"""Checks that idem-audit's duplicate-effect and duplicate-decision findings (JSON report,
first argument) are exactly the duplicates the corpus generator planted (truth.json, second)."""

import json, sys
from collections import Counter
r = json.load(open(sys.argv[1])); t = json.load(open(sys.argv[2]))
def got(rule): return {(f['order'], tuple(sorted(f['effects']))) for f in r['findings'] if f['rule'] == rule}
def want(k): return {(x['order'], tuple(sorted(x['effects']))) for x in t[k]}
print(Counter(f['rule'] for f in r['findings']))
print(Counter(f.get('cause') for f in r['findings'] if f['rule']=='duplicate-effect'))
ok = True
for rule, k in [('duplicate-effect', 'delivery_duplicates'), ('duplicate-decision', 'decision_duplicates')]:
    g, w = got(rule), want(k)
    print(f"{rule}: {len(g)} found, {len(w)} planted, {len(g - w)} unplanned, {len(w - g)} missed", list(g-w)[:3], list(w-g)[:3])
    ok &= g == w
sys.exit(0 if ok else 1)
