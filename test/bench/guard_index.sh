#!/usr/bin/env bash
# test/bench/guard_index.sh — guard indexes (`make bench-guard`).  Never part
# of the pass/fail tests: it measures, it does not judge.
#
# A table t of N text keys i::text (default 1,000,000) with a B-tree t_k
# and a guard index g (USING bloomguard, default options), compared side by
# side in one run, timed rounds alternating (A, B, C, A, B, C, ...):
#   1. checks: N keys (90% absent) in one statement each, in the server:
#      bloom_guard_contains('g', key) against an EXISTS probe of the B-tree
#      (a nested loop over an index-only scan, planner gates off, the keys a
#      subquery's column) and the same EXISTS with the planner's gate on g
#      (BloomGuard above the index-only scan, checking each outer row's key),
#      less the bare loop (the same statement without the check): ns per
#      check and ratios; the false-positive rate each answered.  Then one
#      prepared lookup per transaction, pgbench -n -M prepared -c 1 -T S: TPS
#      of the guard, the B-tree's EXISTS, the gated EXISTS, a stored filter
#      value's check and the lookup written with it (pgbench and its
#      backend pinned to CPU 0 with taskset).
#   2. inserts: N/5 new keys (in an order scattered over the B-tree) into
#      copies of t holding no index, only the B-tree, the B-tree and a guard,
#      only a guard, each after a CHECKPOINT (full_page_writes = on, so each
#      first change of a page after it is a full-page image): µs and WAL
#      bytes per row (the WAL insert position, pg_current_wal_insert_lsn,
#      before and after), split by pg_waldump --stats into heap, B-tree and
#      generic (the guard's) records and full-page images, and ratios.
#   3. builds on t: CREATE INDEX USING bloomguard and CREATE INDEX (B-tree),
#      with max_parallel_maintenance_workers = 0 (one process each); their
#      sizes (pg_relation_size).
#   4. restart: after N/5 more rows are inserted into t (not checkpointed),
#      pg_ctl restart -m fast, then pg_ctl stop -m immediate and start: time
#      from the first connection the server accepts to the first query in
#      which the guard answers "no" for an absent key (one psql run per probe:
#      20-50 ms apart here), and the rows of t it answers "no" for (must be 0).
# Prints the load average at the start and the end.
#
# Options (or the environment variables in brackets):
#   --rows N       keys in t [BF_BENCH_ROWS, 1000000]
#   --seconds S    pgbench -T per run [BF_BENCH_SECONDS, 10]
#   --rounds R     timed rounds of each kind, alternating [BF_BENCH_ROUNDS, 3]
#   --quick        100,000 keys, 3 s pgbench runs, 2 rounds: checks that it runs
#   --no-build     do not build and install (use the installed extension)
# and BF_KEEP_TMP=1, BF_PORT_BASE, BF_EXTRA_CONF (see test/lib.sh).
# About 2.5 minutes on 2 cores with the defaults.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=test/lib.sh
. test/lib.sh

ROWS=${BF_BENCH_ROWS:-1000000}
SECS=${BF_BENCH_SECONDS:-10}
ROUNDS=${BF_BENCH_ROUNDS:-3}
BUILD=1
while (($#)); do
	case $1 in
	--rows) ROWS=$2; shift ;;
	--seconds) SECS=$2; shift ;;
	--rounds) ROUNDS=$2; shift ;;
	--quick) ROWS=100000 SECS=3 ROUNDS=2 ;;
	--no-build) BUILD=0 ;;
	-h | --help) bf_usage "${BASH_SOURCE[0]}"; exit 0 ;;
	*) bf_err "unrecognized option $1 (see --help)"; exit 2 ;;
	esac
	shift
done
bf_require_positive ROWS SECS ROUNDS
if ((ROWS < 10000)); then
	bf_err "ROWS must be at least 10000 (got $ROWS)"
	exit 2
fi
NINS=$((ROWS / 5))

bf_server_traps

START=$SECONDS
if ((BUILD)); then
	bf_ensure_packages
	bf_build_install
fi

# Everything cached: t and four copies of it (with their B-trees and
# guards: about 1 kB per key in all).  The library is preloaded (not needed
# since 2.0) so that no connection, pgbench's or a restart probe's, pays for
# loading it.
sb_mb=$((ROWS * 1200 / 1000000))
((sb_mb < 256)) && sb_mb=256
bf_start_server \
	"shared_preload_libraries = 'bloomfilter'" \
	"shared_buffers = ${sb_mb}MB" \
	"full_page_writes = on" \
	"max_wal_size = 16GB" \
	"checkpoint_timeout = 1h" \
	"autovacuum = off" \
	"jit = off" \
	"max_parallel_workers_per_gather = 0" \
	"max_parallel_maintenance_workers = 0" \
	"maintenance_work_mem = 512MB" \
	"work_mem = 64MB"
load_start=$(bf_loadavg)
if awk -v l="${load_start%% *}" -v n="$(nproc 2>/dev/null || echo 2)" 'BEGIN { exit !(l + 0 > n / 2) }'; then
	bf_warn "load average $load_start on $(nproc 2>/dev/null || echo '?') CPUs: other work is running; the figures will be noisy"
fi
DATA=$BF_TMP/data

q() { bf_psql -qAt -d bench -c "$1"; }
now_ns() { date +%s%N; }
ms_since() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1e6 }'; }

bf_psql -q -d postgres -c "CREATE DATABASE bench"
bf_say "setup: t of $ROWS keys"
bf_psql -q -d bench <<SQL
SET client_min_messages = warning;
CREATE EXTENSION bloomfilter;
CREATE EXTENSION pg_prewarm;
CREATE TABLE t (k text NOT NULL);
INSERT INTO t SELECT i::text FROM generate_series(1, $ROWS) i;
VACUUM ANALYZE t;
-- results: (part, variant, round, ms, n, wal bytes)
CREATE TABLE runs (part text, variant text, round int, ms float8, n bigint, wal numeric);
-- one statement timed in the server; q returns a count.  The join methods
-- other than a nested loop are off so that EXISTS is an index probe per key
-- (it would otherwise be a hash semi join over a scan of t).
CREATE FUNCTION bench_count(q text, gates bool, OUT ms float8, OUT n bigint) LANGUAGE plpgsql AS \$\$
DECLARE t0 timestamptz;
BEGIN
	PERFORM set_config('bloomfilter.planner_guards', gates::text, true);
	PERFORM set_config('enable_hashjoin', 'off', true);
	PERFORM set_config('enable_mergejoin', 'off', true);
	PERFORM set_config('enable_seqscan', 'off', true);
	t0 := clock_timestamp();
	EXECUTE q INTO n;
	ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
END \$\$;
-- one statement timed, with the WAL it inserted (the insert position: the
-- write position lags it under synchronous_commit = off)
CREATE FUNCTION bench_exec(q text, OUT ms float8, OUT wal numeric, OUT lsn0 pg_lsn, OUT lsn1 pg_lsn)
LANGUAGE plpgsql AS \$\$
DECLARE t0 timestamptz;
BEGIN
	lsn0 := pg_current_wal_insert_lsn();
	t0 := clock_timestamp();
	EXECUTE q;
	ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
	lsn1 := pg_current_wal_insert_lsn();
	wal := pg_wal_lsn_diff(lsn1, lsn0);
END \$\$;
CREATE FUNCTION med(float8[]) RETURNS float8 LANGUAGE sql IMMUTABLE AS
\$\$ SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(\$1) x \$\$;
SQL

# ---- 3. builds (first, so that t has its B-tree and guard for what follows)
time_psql() {	# statements on stdin, run in one session; prints their ms
	{
		echo "SELECT clock_timestamp() AS t0 \\gset"
		cat
		echo "SELECT round(extract(epoch FROM clock_timestamp() - :'t0') * 1000, 1);"
	} | bf_psql -qAt -d bench | tail -n 1
}
bf_say "3. builds on $ROWS rows, $ROUNDS rounds: B-tree, guard index"
for ((r = 1; r <= ROUNDS; r++)); do
	if ((r > 1)); then q "DROP INDEX t_k"; fi
	ms=$(time_psql <<<"CREATE INDEX t_k ON t (k);")
	q "INSERT INTO runs VALUES ('build', 'btree', $r, $ms)"
	if ((r > 1)); then q "DROP INDEX g"; fi
	ms=$(time_psql <<<"CREATE INDEX g ON t USING bloomguard (k);")
	q "INSERT INTO runs VALUES ('build', 'guard', $r, $ms)"
	printf '    round %d: B-tree %s ms, guard %s ms\n' "$r" \
		"$(q "SELECT ms FROM runs WHERE part = 'build' AND variant = 'btree' AND round = $r")" "$ms"
done
q "SELECT pg_prewarm('t'), pg_prewarm('t_k'), pg_prewarm('g')" >/dev/null

# ---- 1. checks in the server
M=$ROWS
present=$((M / 10))
KEY="(CASE WHEN i % 10 = 0 THEN i ELSE $ROWS + i END)::text"
declare -A CHECK=(
	[bare]="SELECT count(*) FROM generate_series(1, $M) i WHERE ($KEY) IS NOT NULL"
	[guard]="SELECT count(*) FROM generate_series(1, $M) i WHERE bloom_guard_contains('g', $KEY)"
	[btree]="SELECT count(*) FROM (SELECT $KEY AS key FROM generate_series(1, $M) i OFFSET 0) s WHERE EXISTS (SELECT 1 FROM t WHERE k = s.key)"
	[gate]="SELECT count(*) FROM (SELECT $KEY AS key FROM generate_series(1, $M) i OFFSET 0) s WHERE EXISTS (SELECT 1 FROM t WHERE k = s.key)"
)
plan_of() { # plan_of on|off QUERY: its plan's node names, on one line
	bf_psql -qAt -d bench -c "SET bloomfilter.planner_guards = $1" \
		-c "SET enable_hashjoin = off" -c "SET enable_mergejoin = off" \
		-c "SET enable_seqscan = off" -c "EXPLAIN (COSTS OFF) $2" |
		grep -v ':' | sed 's/^ *//; s/^-> *//' | paste -sd ';' | sed 's/;/; /g'
}
btree_plan=$(plan_of off "${CHECK[btree]}")
gate_plan=$(plan_of on "${CHECK[gate]}")
bf_say "1. checks: $M keys (90% absent) per statement, $ROUNDS rounds (+1 warm-up); B-tree plan: $btree_plan; gated plan: $gate_plan"
for ((r = 0; r <= ROUNDS; r++)); do
	line="    round $r:"
	for v in bare guard btree gate; do
		res=$(q "SELECT ms || ' ' || n FROM bench_count(\$q\$${CHECK[$v]}\$q\$, $([[ $v == gate ]] && echo true || echo false))")
		((r > 0)) && q "INSERT INTO runs VALUES ('check', '$v', $r, ${res% *}, ${res#* })"
		line+=" $v ${res% *} ms (${res#* } maybe)"
	done
	((r == 0)) && line+=" (warm-up, not counted)"
	echo "$line"
done

# ---- 1b. one prepared lookup per transaction
W=$BF_TMP/pgbench
mkdir -p "$W"
lookup() {	# $1: the statement of :n
	cat <<PGB
\\set r random(1, 10)
\\set n random(1, $ROWS)
\\if :r != 1
\\set n :n + $ROWS
\\endif
$1
PGB
}
# The key is the statement's parameter, whole (its text the number): a key
# computed from it ('user' || $1) is not gated, as textcat may fail.
lookup "SELECT bloom_guard_contains('g', :n::text);" >"$W/guard.sql"
lookup "SELECT EXISTS (SELECT 1 FROM t WHERE k = :n);" >"$W/btree.sql"
cp "$W/btree.sql" "$W/gate.sql"
# a stored filter value (bloom_agg of t, in a table): the check alone, and
# the lookup that reads t only on "maybe", written inline
lookup "SELECT bf @> :n::text FROM filters WHERE name = 't';" >"$W/stored.sql"
lookup "SELECT CASE WHEN NOT (SELECT bf FROM filters WHERE name = 't') @> :n::text THEN false
	ELSE EXISTS (SELECT 1 FROM t WHERE k = :n::text) END;" >"$W/stored_exists.sql"
# One client and its backend ping-pong: on different CPUs each wait ends in
# an idle CPU's wake-up, and runs land in modes 2-5x apart depending on where
# the scheduler put them.  So pgbench and the backends the postmaster forks
# meanwhile are pinned to the first CPU (taskset), as in planner_guards.sh.
POSTMASTER=$(head -n 1 "$DATA/postmaster.pid")
pin=()
if command -v taskset >/dev/null 2>&1 && ALL_CPUS=$(taskset -p -c "$POSTMASTER" | sed 's/.*: //') &&
	taskset -p -c 0 "$POSTMASTER" >/dev/null; then
	pin=(taskset -c 0)
else
	bf_warn "taskset failed: pgbench and its backend are not pinned (the TPS will be noisier)"
fi
# the lookup's generic plan with gates on (pgbench's prepared statement)
lookup_plan=$(bf_psql -qAt -d bench -c "SET plan_cache_mode = force_generic_plan" \
	-c "PREPARE p AS SELECT EXISTS (SELECT 1 FROM t WHERE k = \$1)" -c "EXPLAIN (COSTS OFF) EXECUTE p('1')" |
	grep -v ':' | sed 's/^ *//; s/^-> *//' | paste -sd ';' | sed 's/;/; /g')
bf_say "1b. gated lookup's generic plan: $lookup_plan"
q "CREATE TABLE filters (name text PRIMARY KEY, bf bloomfilter)"
q "INSERT INTO filters SELECT 't', bloom_agg(k) FROM t"
bf_say "1b. ${pin[*]:+${pin[*]} }pgbench -n -M prepared -c 1 -T $SECS, $ROUNDS rounds: guard, B-tree EXISTS, the same EXISTS gated, a stored filter's check, the stored filter's lookup"
for ((r = 1; r <= ROUNDS; r++)); do
	line="    round $r:"
	for v in guard btree gate stored stored_exists; do
		gates=off
		[[ $v == gate ]] && gates=on
		out=$(PGOPTIONS="-c bloomfilter.planner_guards=$gates" \
			"${pin[@]}" "$PG_BINDIR/pgbench" -n -M prepared -c 1 -T "$SECS" -f "$W/$v.sql" bench 2>&1) || {
			echo "$out"
			bf_err "pgbench failed"
			exit 1
		}
		tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out" | tail -n 1)
		q "INSERT INTO runs VALUES ('pgbench', '$v', $r, ${tps:-NULL})"
		line+=" $v ${tps:-?} tps"
	done
	echo "$line"
done
if ((${#pin[@]})); then taskset -p -c "$ALL_CPUS" "$POSTMASTER" >/dev/null; fi

# ---- 2. inserts and WAL
CONFIGS=(none btree both guard)
bf_say "2. inserts: copies of t for ${CONFIGS[*]}"
for c in "${CONFIGS[@]}"; do
	q "CREATE TABLE ins_$c AS SELECT k FROM t LIMIT $ROWS"
	q "VACUUM ANALYZE ins_$c"
	case $c in
	btree) q "CREATE INDEX ins_btree_k ON ins_btree (k)" ;;
	both) q "CREATE INDEX ins_both_k ON ins_both (k)"; q "CREATE INDEX ins_both_g ON ins_both USING bloomguard (k)" ;;
	guard) q "CREATE INDEX ins_guard_g ON ins_guard USING bloomguard (k)" ;;
	esac
	q "SELECT pg_prewarm(c.oid) FROM pg_class c WHERE c.relname LIKE 'ins\\_${c}%'" >/dev/null
done
# a multiplier prime to NINS: the keys come in an order scattered over the B-tree
mult=7919
while ((NINS % mult == 0)); do mult=$((mult + 2)); done
# heap, B-tree, generic: bytes of records and of full-page images, and the
# total of every record, from pg_waldump
waldump_split() {
	"$PG_BINDIR/pg_waldump" -p "$DATA/pg_wal" -s "$1" -e "$2" --stats 2>/dev/null | awk '
		{ gsub(/\([^)]*\)/, ""); gsub(/\[[^]]*\]/, "") }	# (percentages): Type N record-size FPI-size combined
		$1 == "Total" { t = $5 }
		$1 == "Heap" || $1 == "Heap2" { hr += $3; hf += $4 }
		$1 == "Btree" { br += $3; bf += $4 }
		$1 == "Generic" { gr += $3; gf += $4 }
		END { printf "%d %d %d %d %d %d %d", hr, hf, br, bf, gr, gf, t }'
}
q "CREATE TABLE walsplit (variant text, round int, heap_rec numeric, heap_fpi numeric,
	btree_rec numeric, btree_fpi numeric, generic_rec numeric, generic_fpi numeric)"
bf_say "2. inserts of $NINS new keys per round, $ROUNDS rounds, each after a CHECKPOINT"
for ((r = 1; r <= ROUNDS; r++)); do
	base=$((ROWS * 2 + (r - 1) * NINS + 1))
	line="    round $r:"
	for c in "${CONFIGS[@]}"; do
		q "CHECKPOINT"
		ins="INSERT INTO ins_$c SELECT ($base + (i * $mult) % $NINS)::text FROM generate_series(0::bigint, $((NINS - 1))) i"
		res=$(q "SELECT ms || ' ' || wal || ' ' || lsn0 || ' ' || lsn1 FROM bench_exec(\$q\$$ins\$q\$)")
		read -r ms wal lsn0 lsn1 <<<"$res"
		q "INSERT INTO runs VALUES ('insert', '$c', $r, $ms, $NINS, $wal)"
		# the WAL is in the files once written (the WAL writer, within a few
		# hundred ms under synchronous_commit = off): a commit that waits
		q "SET synchronous_commit = on; SELECT txid_current()" >/dev/null
		read -r hr hf br bf gr gf total <<<"$(waldump_split "$lsn0" "$lsn1")"
		q "INSERT INTO walsplit VALUES ('$c', $r, $hr, $hf, $br, $bf, $gr, $gf)"
		line+=" $c $ms ms $wal B (pg_waldump: $total B of records);"
	done
	echo "$line"
done

# ---- report of 1-3 (before the restarts: nothing below depends on them)
echo
echo "Guard indexes: t of $ROWS text keys; PostgreSQL $("$PG_BINDIR/postgres" -V | awk '{print $3}')," \
	"$(nproc 2>/dev/null || echo '?') CPUs, shared_buffers ${sb_mb}MB, no parallel workers; load average at start $load_start"
echo
echo "1. Checks in the server: $M keys per statement, $present present; ns per check above the bare loop, median (min–max) of $ROUNDS rounds"
echo
bf_psql -qAt -d bench <<SQL
WITH b AS (SELECT round, ms FROM runs WHERE part = 'check' AND variant = 'bare'),
c AS (
	SELECT r.variant, array_agg((r.ms - b.ms) * 1e6 / $M) AS ns, array_agg(r.ms) AS ms, max(r.n) AS n
	  FROM runs r JOIN b USING (round) WHERE r.part = 'check' AND r.variant <> 'bare' GROUP BY r.variant),
s AS (SELECT variant, med(ns) AS ns, (SELECT min(x) FROM unnest(ns) x) AS lo,
			 (SELECT max(x) FROM unnest(ns) x) AS hi, med(ms) AS ms, n FROM c),
info AS (SELECT * FROM bloom_guard_info('g'))
SELECT '| check | ns/check, median (min–max) | statement ms (median) | "maybe" of $M | measured FPR on the absent | estimated FPR |'
UNION ALL SELECT '|---|---|---|---|---|---|'
UNION ALL SELECT format('| bare loop (subtracted) | | %s | | | |',
	round(med((SELECT array_agg(ms) FROM b))::numeric, 1))
UNION ALL
SELECT format('| %s | %s (%s–%s) | %s | %s | %s%% | %s |',
	CASE variant WHEN 'guard' THEN 'bloom_guard_contains (index g)'
				 WHEN 'gate' THEN 'EXISTS, gated: BloomGuard, then the B-tree on "maybe"'
				 ELSE 'EXISTS, B-tree probe (gates off)' END,
	round(ns::numeric), round(lo::numeric), round(hi::numeric), round(ms::numeric, 1), n,
	round(100.0 * (n - $present) / ($M - $present), 3),
	CASE variant WHEN 'guard' THEN round(100 * (SELECT estimated_fpr FROM info)::numeric, 3) || '%'
				 ELSE '(exact)' END)
  FROM (SELECT * FROM s ORDER BY array_position(ARRAY['guard', 'btree', 'gate'], variant)) s
UNION ALL SELECT ''
UNION ALL SELECT format('ratios of the medians: guard index / B-tree probe %sx; gated EXISTS / B-tree EXISTS %sx',
	round(((SELECT ns FROM s WHERE variant = 'guard') / (SELECT ns FROM s WHERE variant = 'btree'))::numeric, 2),
	round(((SELECT ns FROM s WHERE variant = 'gate') / (SELECT ns FROM s WHERE variant = 'btree'))::numeric, 2));
SQL
echo
echo "1b. One prepared lookup per transaction (${pin[*]:+${pin[*]} }pgbench -n -M prepared -c 1 -T $SECS${pin[*]:+, its backend on the same CPU}; 90% absent keys), $ROUNDS rounds"
echo
bf_psql -qAt -d bench <<SQL
WITH s AS (SELECT variant, med(array_agg(ms)) AS m, min(ms) AS lo, max(ms) AS hi
			 FROM runs WHERE part = 'pgbench' GROUP BY variant)
SELECT '| lookup | TPS, median (min–max) | x B-tree |'
UNION ALL SELECT '|---|---|---|'
UNION ALL
SELECT format('| %s | %s (%s–%s) | %s |',
	CASE variant WHEN 'guard' THEN 'SELECT bloom_guard_contains(''g'', key)'
				 WHEN 'gate' THEN 'SELECT EXISTS (SELECT 1 FROM t WHERE k = key), gated'
				 WHEN 'stored' THEN 'SELECT bf @> key FROM filters WHERE name = ''t'''
				 WHEN 'stored_exists' THEN 'SELECT CASE WHEN NOT (SELECT bf FROM filters …) @> key THEN false ELSE EXISTS (…) END'
				 ELSE 'SELECT EXISTS (SELECT 1 FROM t WHERE k = key), gates off' END,
	round(m::numeric), round(lo::numeric), round(hi::numeric),
	round((m / (SELECT m FROM s WHERE variant = 'btree'))::numeric, 2))
  FROM (SELECT * FROM s ORDER BY array_position(ARRAY['guard', 'btree', 'gate', 'stored', 'stored_exists'], variant)) s;
SQL
echo
echo "2. Inserts of $NINS new keys into a copy of t ($ROWS rows at the first round, $NINS more each round), each after a CHECKPOINT; mean of $ROUNDS rounds"
echo "   (WAL split by pg_waldump --stats: records + full-page images, bytes per row)"
echo
bf_psql -qAt -d bench <<SQL
WITH s AS (
	SELECT r.variant, avg(r.ms) * 1000 / $NINS AS us, min(r.ms) * 1000 / $NINS AS us_lo,
		   max(r.ms) * 1000 / $NINS AS us_hi, avg(r.wal) / $NINS AS wal,
		   avg(w.heap_rec + w.heap_fpi) / $NINS AS heap, avg(w.heap_fpi) / $NINS AS heap_fpi,
		   avg(w.btree_rec) / $NINS AS btree_rec, avg(w.btree_fpi) / $NINS AS btree_fpi,
		   avg(w.generic_rec) / $NINS AS gen_rec, avg(w.generic_fpi) / $NINS AS gen_fpi
	  FROM runs r JOIN walsplit w USING (variant, round)
	 WHERE r.part = 'insert' GROUP BY r.variant),
x AS (SELECT * FROM s WHERE variant = 'btree'), z AS (SELECT * FROM s WHERE variant = 'none')
SELECT '| table | µs/row (min–max) | x B-tree | WAL B/row | x B-tree | heap WAL (of it FPI) | B-tree records + FPI | generic (guard) records + FPI |'
UNION ALL SELECT '|---|---|---|---|---|---|---|---|'
UNION ALL
SELECT format('| %s | %s (%s–%s) | %s | %s | %s | %s (%s) | %s + %s | %s + %s |',
	CASE variant WHEN 'none' THEN 'no index' WHEN 'btree' THEN 'B-tree'
				 WHEN 'both' THEN 'B-tree + guard index' ELSE 'guard index only' END,
	round(us::numeric, 2), round(us_lo::numeric, 2), round(us_hi::numeric, 2),
	round((us / (SELECT us FROM x))::numeric, 2),
	round(wal::numeric, 1), round((wal / (SELECT wal FROM x))::numeric, 2),
	round(heap::numeric, 1), round(heap_fpi::numeric, 1),
	round(btree_rec::numeric, 1), round(btree_fpi::numeric, 1),
	round(gen_rec::numeric, 1), round(gen_fpi::numeric, 1))
  FROM (SELECT * FROM s ORDER BY array_position(ARRAY['none', 'btree', 'both', 'guard'], variant)) s
UNION ALL SELECT ''
UNION ALL SELECT format('added by the guard index: %s µs and %s WAL bytes per row (B-tree + guard against B-tree: %sx time, %sx WAL);'
	|| ' by the B-tree: %s µs and %s B (guard only against B-tree only: %sx time, %sx WAL above the heap)',
	round(((SELECT us FROM s WHERE variant = 'both') - (SELECT us FROM x))::numeric, 2),
	round(((SELECT wal FROM s WHERE variant = 'both') - (SELECT wal FROM x))::numeric, 1),
	round(((SELECT us FROM s WHERE variant = 'both') / (SELECT us FROM x))::numeric, 2),
	round(((SELECT wal FROM s WHERE variant = 'both') / (SELECT wal FROM x))::numeric, 2),
	round(((SELECT us FROM x) - (SELECT us FROM z))::numeric, 2),
	round(((SELECT wal FROM x) - (SELECT wal FROM z))::numeric, 1),
	round((((SELECT us FROM s WHERE variant = 'guard') - (SELECT us FROM z))
		   / nullif((SELECT us FROM x) - (SELECT us FROM z), 0))::numeric, 2),
	round((((SELECT wal FROM s WHERE variant = 'guard') - (SELECT wal FROM z))
		   / nullif((SELECT wal FROM x) - (SELECT wal FROM z), 0))::numeric, 2))
UNION ALL SELECT format('guard of ins_both after the inserts: %s layers, capacity %s, %s keys added, %s bytes, estimated FPR %s%%',
	layers, capacity, added, bytes, round(100 * estimated_fpr::numeric, 3)) FROM bloom_guard_info('ins_both_g');
SQL
echo
echo "3. Builds on t ($ROWS rows), one process each; median (min–max) of $ROUNDS rounds"
echo
bf_psql -qAt -d bench <<SQL
WITH s AS (SELECT variant, med(array_agg(ms)) AS m, min(ms) AS lo, max(ms) AS hi
			 FROM runs WHERE part = 'build' GROUP BY variant),
sz AS (SELECT 'btree' AS variant, pg_relation_size('t_k') AS bytes
	   UNION ALL SELECT 'guard', pg_relation_size('g'))
SELECT '| build | ms, median (min–max) | x B-tree | size | x B-tree |'
UNION ALL SELECT '|---|---|---|---|---|'
UNION ALL
SELECT format('| %s | %s (%s–%s) | %s | %s (%s bytes) | %s |',
	CASE variant WHEN 'guard' THEN 'CREATE INDEX USING bloomguard'
				 ELSE 'CREATE INDEX (B-tree)' END,
	round(m::numeric), round(lo::numeric), round(hi::numeric),
	round((m / (SELECT m FROM s WHERE variant = 'btree'))::numeric, 2),
	pg_size_pretty(sz.bytes), sz.bytes,
	round(sz.bytes::numeric / (SELECT bytes FROM sz WHERE variant = 'btree'), 3))
  FROM (SELECT * FROM s ORDER BY array_position(ARRAY['guard', 'btree'], variant)) s JOIN sz USING (variant)
UNION ALL SELECT ''
UNION ALL SELECT format('guard g: %s layer(s), capacity %s, %s keys added, bloom_guard_info bytes %s, target %s%%, estimated FPR %s%%',
	layers, capacity, added, bytes, 100 * target_fpr, round(100 * estimated_fpr::numeric, 3)) FROM bloom_guard_info('g');
SQL

# ---- 4. restarts
# an absent key the guard answers "no" for before the restarts
absent=
for ((j = 1; j <= 100; j++)); do
	if [[ $(q "SELECT bloom_guard_contains('g', 'nobody$j')") == f ]]; then
		absent=nobody$j
		break
	fi
done
if [[ -z $absent ]]; then
	bf_err "no absent key of 100 answered \"no\" by the guard"
	exit 1
fi
PROBE="SELECT bloom_guard_contains('g', '$absent')
	|| ' ' || round(extract(epoch FROM clock_timestamp() - statement_timestamp()) * 1000, 2)"
# Probe from $1 (ns, the start command issued) until the guard answers "no";
# prints: start-to-accept ms, guard ms, probes, the first query's server ms
# and what it answered (times after the first accepted connection).
probe() {
	local t_issue=$1 t_acc='' t_g='' n=0 first='' out t0 t1 g
	while :; do
		t0=$(now_ns)
		if out=$(bf_psql -qAt -d bench -c "$PROBE" 2>/dev/null); then
			t1=$(now_ns)
			n=$((n + 1))
			if [[ -z $t_acc ]]; then
				t_acc=$t0
				first="${out##* } ${out% *}"
			fi
			read -r g _ <<<"$out"
			[[ -z $t_g && $g == false ]] && t_g=$t1
			[[ -n $t_g ]] && break
		fi
		if (($(now_ns) - t_issue > 180000000000)); then
			break
		fi
		sleep 0.002
	done
	if [[ -z $t_acc ]]; then
		bf_err "the server accepted no connection within 180 s"
		exit 1
	fi
	printf '%s %s %s %s\n' "$(ms_since "$t_issue" "$t_acc")" \
		"$(if [[ -n $t_g ]]; then echo "$(ms_since "$t_acc" "$t_g")_ms"; else echo "not_within_180_s"; fi)" \
		"$n" "$first"
}
fneg() {	# rows of t the guard answers "no" for (false negatives), and the rows
	q "SELECT count(*) FILTER (WHERE NOT bloom_guard_contains('g', k)) || ' ' || count(*) FROM t"
}
declare -A RS
for mode in restart immediate; do
	base=$((ROWS * 5))
	if [[ $mode == immediate ]]; then base=$((ROWS * 5 + NINS)); fi
	# (committed synchronously: an immediate stop must not lose them)
	q "SET synchronous_commit = on; INSERT INTO t SELECT ($base + i)::text FROM generate_series(1, $NINS) i"
	rows_t=$(q "SELECT count(*) FROM t")
	bf_say "4. $mode: $rows_t rows in t ($NINS just inserted, not checkpointed)"
	if [[ $mode == restart ]]; then
		t_issue=0
		# pg_ctl restart waits for the stop, then starts without waiting (-W)
		bf_as_pg "$PG_BINDIR/pg_ctl" -D "$DATA" -l "$BF_TMP/server.log" -m fast -W restart >"$BF_TMP/pg_ctl.log" 2>&1
		t_issue=$(now_ns)
	else
		bf_as_pg "$PG_BINDIR/pg_ctl" -D "$DATA" -m immediate -w stop >"$BF_TMP/pg_ctl.log" 2>&1
		t_issue=$(now_ns)
		bf_as_pg "$PG_BINDIR/pg_ctl" -D "$DATA" -l "$BF_TMP/server.log" -W start >>"$BF_TMP/pg_ctl.log" 2>&1
	fi
	RS[$mode]=$(probe "$t_issue")
	RS[$mode.rows]=$rows_t
	RS[$mode.fn]=$(fneg)
	RS[$mode.rows_after]=${RS[$mode.fn]##* }
	echo "    $mode: ${RS[$mode]}; false negatives (guard, of rows): ${RS[$mode.fn]}"
done

echo
echo "4. Restart to the first exact \"no\" for an absent key ('$absent'), probing with psql (one connection per probe)"
echo
echo "| restart | start command to first accepted connection | guard index: first \"no\" after it | probes | first query (server ms, guard) | rows of t answering \"no\" (of rows) |"
echo "|---|---|---|---|---|---|"
for mode in restart immediate; do
	read -r acc g n fms fg <<<"${RS[$mode]}"
	read -r fg_n rows <<<"${RS[$mode.fn]}"
	case $mode in
	restart) desc="pg_ctl restart -m fast" ;;
	*) desc="pg_ctl stop -m immediate, start (crash recovery)" ;;
	esac
	echo "| $desc | $acc ms | ${g//_/ } | $n | $fms ms: $fg | $fg_n (of $rows) |"
done
echo
echo "(times are taken by the client: a probe is a psql start, connection and query, so the"
echo "guard's figure is the first probe's own duration when its first answer was \"no\")"
echo
bf_say "done in $((SECONDS - START)) s; load average at start $load_start, at end $(bf_loadavg)"
