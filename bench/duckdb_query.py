"""The duplicate-refund audit in DuckDB over the same raw log files, for bench/run.sh.

Every line of every *.log file is read as one text column; refund lines of the payments
service are parsed with regexp_extract, and a window function (lag over order and amount,
in time order) finds refunds repeated within 24 hours: delivery and decision duplicates
together, which idem-audit reports as duplicate-effect and duplicate-decision.
Usage: duckdb_query.py CORPUS_DIR THREADS
"""

import sys

import duckdb

corpus, threads = sys.argv[1], int(sys.argv[2])
con = duckdb.connect()
con.execute(f"SET threads={threads}")
QUERY = f"""
WITH lines AS (
  SELECT line FROM read_csv('{corpus}/*.log', columns={{'line': 'VARCHAR'}}, delim='\\x01',
                            header=false, quote='', escape='', auto_detect=false)
), refunds AS (
  SELECT CAST(regexp_extract(line, '^(\\S+)', 1) AS TIMESTAMPTZ) AS ts,
         regexp_extract(line, '  refund (\\S+)', 1) AS id,
         regexp_extract(line, '  order (\\S+)', 1) AS ord,
         CAST(regexp_extract(line, '  (\\d+)p  ', 1) AS BIGINT) AS amount
  FROM lines
  WHERE regexp_matches(line, '^\\S+  refund \\S+  order ')
    AND NOT regexp_matches(line, '  (rejected|failed|declined|canceled)')
), w AS (
  SELECT *, lag(ts) OVER (PARTITION BY ord, amount ORDER BY ts, id) AS prev FROM refunds
)
SELECT ord, amount, count(*) AS repeats FROM w
WHERE prev IS NOT NULL AND ts - prev <= INTERVAL 24 HOUR
GROUP BY ord, amount ORDER BY ord
"""
rows = con.execute(QUERY).fetchall()
print(f"{len(rows)} orders refunded again within 24h, {sum(r[2] for r in rows)} repeats")
