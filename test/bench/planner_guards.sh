#!/usr/bin/env bash
# test/bench/planner_guards.sh — the planner-guard benchmark
# (`make bench-planner`).  Never part of the pass/fail tests: it measures, it
# does not judge.
#
# Unchanged application queries, with bloomfilter.planner_guards on
# (guarded: a BloomGuard node checks the column's guard index once before
# each scan and skips the scan on "no") and off (unguarded: the same plans
# without the gate), on the same tables with the same guard indexes, runs
# alternating, pgbench -M prepared with 1 and 4 clients.  90% of the keys
# looked up are absent.  The guards: CREATE INDEX ... USING bloomguard on
# users.username, and on events.event_id through the partitioned table (a
# partitioned index: one guard per partition, each gating its partition's
# scan); default options (fpr 1%, capacity twice the estimated rows).
#   users    a 1,000,000-row users table (unique username, text: the
#            number's digits, so that pgbench passes the key whole as the
#            parameter; 'user' || $1 would not be gated, textcat may fail):
#            SELECT id FROM users WHERE username = $1
#   events   an events table range-partitioned by day into 64 partitions:
#            SELECT event_id, day FROM events WHERE event_id = $1 (not the
#            partition key: an index probe in every partition)
#   plpgsql  the events lookup inside a PL/pgSQL function (EXISTS)
#   trigger  INSERT INTO events, through a BEFORE INSERT trigger that skips
#            an event_id already there (90% new ids, 10% duplicates)
# Prints TPS side by side with their ratio, the table and index blocks
# touched (shared buffer hits + reads) and read per lookup, from
# pg_statio_user_tables, less the guard indexes' blocks (pg_statio_user_indexes),
# which are printed apart, then each guard's layers, keys, size, estimated
# rate and checks (idx_scan).
#
# Installs what is missing, builds and installs the extension, starts a
# throwaway server (test/lib.sh) with shared_preload_libraries =
# 'bloomfilter' (not needed since 2.0: so that no pgbench connection loads
# the library while planning its first statement), and removes it on exit.
#
# Options (or the environment variables in brackets):
#   --users N      rows of users [BF_BENCH_PLANNER_USERS, 1000000]
#   --events N     rows of events [BF_BENCH_PLANNER_EVENTS, 10000000]
#   --seconds S    pgbench -T per run [BF_BENCH_PLANNER_SECONDS, 10]
#   --rounds R     unguarded + guarded runs, alternating [BF_BENCH_PLANNER_ROUNDS, 2]
#   --quick        100,000 users, 640,000 events, 3 s runs, 1 round
#   --no-build     do not build and install (use the installed extension)
# and BF_KEEP_TMP=1, BF_PORT_BASE, BF_EXTRA_CONF (see test/lib.sh).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=test/lib.sh
. test/lib.sh

USERS=${BF_BENCH_PLANNER_USERS:-1000000}
EVENTS=${BF_BENCH_PLANNER_EVENTS:-10000000}
SECS=${BF_BENCH_PLANNER_SECONDS:-10}
ROUNDS=${BF_BENCH_PLANNER_ROUNDS:-2}
BUILD=1
while (($#)); do
	case $1 in
	--users) USERS=$2; shift ;;
	--events) EVENTS=$2; shift ;;
	--seconds) SECS=$2; shift ;;
	--rounds) ROUNDS=$2; shift ;;
	--quick) USERS=100000 EVENTS=640000 SECS=3 ROUNDS=1 ;;
	--no-build) BUILD=0 ;;
	-h | --help) bf_usage "${BASH_SOURCE[0]}"; exit 0 ;;
	*) bf_err "unrecognized option $1 (see --help)"; exit 2 ;;
	esac
	shift
done
bf_require_positive USERS EVENTS SECS ROUNDS

bf_server_traps

START=$SECONDS
if ((BUILD)); then
	bf_ensure_packages
	bf_build_install
fi

load_start=$(bf_loadavg)
bf_start_server \
	"shared_preload_libraries = 'bloomfilter'" \
	"shared_buffers = 2GB" \
	"max_connections = 50" \
	"max_wal_size = 8GB" \
	"checkpoint_timeout = 30min" \
	"autovacuum = off" \
	"jit = off"

SQL=test/bench/planner_guards.sql
bf_psql -q -d postgres -c "CREATE DATABASE bench"
bf_say "setup: $USERS users, $EVENTS events in 64 partitions, the guards ($SQL)"
bf_psql -q -d bench -v ON_ERROR_STOP=1 -v step=setup -v users="$USERS" -v events="$EVENTS" -f "$SQL"
bf_say "setup done in $((SECONDS - START)) s"

W=$BF_TMP/pgbench
mkdir -p "$W"
cat >"$W/users.sql" <<PGB
\\set r random(1, 10)
\\set k random(1, $USERS)
\\if :r != 1
\\set k :k + 1000000000000
\\endif
SELECT id FROM users WHERE username = :k;
PGB
cat >"$W/events.sql" <<PGB
\\set r random(1, 10)
\\set k random(1, $EVENTS)
\\if :r != 1
\\set k :k + 1000000000000
\\endif
SELECT event_id, day FROM events WHERE event_id = :k;
PGB
cat >"$W/plpgsql.sql" <<PGB
\\set r random(1, 10)
\\set k random(1, $EVENTS)
\\if :r != 1
\\set k :k + 1000000000000
\\endif
SELECT event_exists(:k);
PGB
cat >"$W/trigger.sql" <<PGB
\\set r random(1, 10)
\\set k random(1, $EVENTS)
\\if :r != 1
\\set k random(2000000000000, 9000000000000)
\\endif
\\set d :k % 64
INSERT INTO events VALUES (:k, :d, 'new');
PGB

# blocks of the scenario's tables and their indexes but the guards: hits +
# reads, reads; then the guard indexes' hits + reads
stat_q() {
	local like=$1
	echo "SELECT pg_stat_clear_snapshot();
	WITH t AS (SELECT coalesce(sum(coalesce(heap_blks_hit, 0) + coalesce(heap_blks_read, 0)
				+ coalesce(idx_blks_hit, 0) + coalesce(idx_blks_read, 0)), 0) AS blocks,
				coalesce(sum(coalesce(heap_blks_read, 0) + coalesce(idx_blks_read, 0)), 0) AS reads
			FROM pg_statio_user_tables WHERE relname LIKE '$like'),
		g AS (SELECT coalesce(sum(coalesce(s.idx_blks_hit, 0) + coalesce(s.idx_blks_read, 0)), 0) AS blocks,
				coalesce(sum(coalesce(s.idx_blks_read, 0)), 0) AS reads
			FROM pg_statio_user_indexes s JOIN pg_class c ON c.oid = s.indexrelid
			JOIN pg_am am ON am.oid = c.relam AND am.amname = 'bloomguard'
			WHERE s.relname LIKE '$like')
	SELECT (t.blocks - g.blocks) || ' ' || (t.reads - g.reads) || ' ' || g.blocks FROM t, g"
}

# With one client, pgbench and its backend wait for each other at every
# statement; on different CPUs each wait ends in an idle CPU's wake-up, and
# runs land in two modes 2-3x apart depending on where the scheduler put
# them.  One-client runs therefore pin pgbench and the backends the
# postmaster forks meanwhile to the first CPU (taskset); four-client runs
# use every CPU.
POSTMASTER=$(head -n 1 "$BF_TMP/data/postmaster.pid")
ALL_CPUS=$(taskset -p -c "$POSTMASTER" | sed 's/.*: //')
pin_for() {
	local clients=$1
	if ((clients == 1)); then
		taskset -p -c 0 "$POSTMASTER" >/dev/null
		echo "taskset -c 0"
	else
		taskset -p -c "$ALL_CPUS" "$POSTMASTER" >/dev/null
	fi
}

run_one() {
	local scenario=$1 clients=$2 mode=$3 round=$4 like out before after tps tx pin b0 r0 g0 b1 r1 g1
	[[ $scenario == users ]] && like='users' || like='events%'
	before=$(bf_psql -At -d bench -c "$(stat_q "$like")" | tail -n 1)
	pin=$(pin_for "$clients")
	# shellcheck disable=SC2086 # $pin is a command prefix or nothing
	out=$(PGOPTIONS="-c bloomfilter.planner_guards=$mode" $pin "$PG_BINDIR/pgbench" -n -M prepared \
		-c "$clients" -j "$clients" -T "$SECS" -f "$W/$scenario.sql" bench 2>&1) || {
		echo "$out"
		bf_err "pgbench failed"
		return 1
	}
	sleep 1 # the backends' statistics are flushed as they exit
	after=$(bf_psql -At -d bench -c "$(stat_q "$like")" | tail -n 1)
	tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out" | tail -n 1)
	tx=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out" | tail -n 1)
	printf '    %-8s -c %s guards %-3s round %s: tps %s, %s transactions\n' \
		"$scenario" "$clients" "$mode" "$round" "${tps:-?}" "${tx:-?}"
	read -r b0 r0 g0 <<<"$before"
	read -r b1 r1 g1 <<<"$after"
	bf_psql -q -d bench -c "INSERT INTO bench_runs VALUES ('$scenario', $clients, '$mode', $round,
		${tps:-NULL}, ${tx:-NULL}, $((b1 - b0)), $((r1 - r0)), $((g1 - g0)))"
}

# the plans, once
bf_psql -d bench -c "SET plan_cache_mode = force_generic_plan" \
	-c "PREPARE u(text) AS SELECT id FROM users WHERE username = \$1" \
	-c "EXPLAIN (COSTS OFF) EXECUTE u('1')" \
	-c "PREPARE e(bigint) AS SELECT event_id, day FROM events WHERE event_id = \$1" \
	-c "EXPLAIN (COSTS OFF) EXECUTE e(1)" | sed -n '1,16p'


for scenario in users events plpgsql trigger; do
	for clients in 1 4; do
		for ((round = 1; round <= ROUNDS; round++)); do
			run_one "$scenario" "$clients" off "$round"
			run_one "$scenario" "$clients" on "$round"
		done
	done
done

echo
echo "Planner guards: $USERS users, $EVENTS events in 64 partitions; pgbench -M prepared -T $SECS," \
	"$ROUNDS round(s) per mode, alternating, 1 client pinned with its backend to CPU 0; 90% of keys absent; PostgreSQL $("$PG_BINDIR/postgres" -V | awk '{print $3}')," \
	"$(nproc 2>/dev/null || echo '?') CPUs, load average at start $load_start"
bf_psql -q -d bench -v step=report -f "$SQL"
bf_say "benchmark done in $((SECONDS - START)) s; load average at end $(bf_loadavg)"
