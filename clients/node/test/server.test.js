'use strict';
// The client against a server (PGHOST, PGPORT, PGUSER name it; test/run-tests.sh
// runs this against its throwaway server): every key kind's answers equal the
// server's @>, and a GuardCopy stays equal to the guard's filter.
const test = require('node:test');
const assert = require('node:assert');
const { Client } = require('pg');
const c = require('..');

const DB = 'bf_node_client_test';
let db;

async function admin(sql) {
  const a = new Client({ database: 'postgres' });
  await a.connect();
  try { await a.query(sql); } finally { await a.end(); }
}

test.before(async () => {
  await admin(`DROP DATABASE IF EXISTS ${DB}`);
  await admin(`CREATE DATABASE ${DB}`);
  db = new Client({ database: DB });
  await db.connect();
  await db.query('CREATE EXTENSION bloomfilter');
  await c.init();
});

test.after(async () => {
  await db.end();
  await admin(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
});

// key type, expression over i, and how the client is told the type
const KINDS = [
  ['int4', "(CASE WHEN i % 3 = 0 THEN -i ELSE i * 7919 END)::int4"],
  ['int8', '(i::int8 * 1000003 - 500000000000)'],
  ['oid', '(i::int8 * 2654435 % 4294967296)::oid'],
  ['text', "CASE i % 4 WHEN 0 THEN 'u' || i || '  ' WHEN 1 THEN repeat('é', 30) || i ELSE 'user' || i END"],
  ['varchar', "('v' || i || repeat(' ', i % 3))::varchar"],
  ['bpchar', "('c' || i)::char(12)"],
  ['name', "('n' || i || repeat('x', i % 70))::name"],
  ['bytea', "decode(md5(i::text), 'hex')"],
  ['uuid', 'md5(i::text)::uuid'],
  ['float8', "(CASE WHEN i % 5 = 0 THEN -i / 3.0 ELSE i * 1.5e10 END)::float8"],
  ['float4', '(i / 7.0)::float4'],
  ['numeric', "(i / 8.0)::numeric(20,6)"],
  ['date', "'2000-01-01'::date + (i * 37 - 20000)"],
  ['timestamp', "'2026-01-01'::timestamp + i * interval '77 min 0.123456 s'"],
  ['timestamptz', "'2026-01-01 00:00+05:30'::timestamptz + i * interval '1 min 0.5 s'"],
];

for (const layout of ['blocked', 'classic', 'counting', 'scalable', 'cuckoo']) {
  test(`${layout}: the client answers as the server for every key kind`, async () => {
    await db.query("SET TimeZone = 'UTC'");
    for (const [type, expr] of KINDS) {
      const build = layout === 'cuckoo' ? `cuckoo_agg(k, 3000, 0.01)`
        : layout === 'scalable' ? 'bloom_add_all(bloom_empty_scalable(100, 0.01), array_agg(k))'
          : `bloom_agg(k, 2000, 0.01, '${layout}')`;
      const { rows: [f] } = await db.query(
        `SELECT (${build})::bytea AS b FROM (SELECT ${expr} AS k FROM generate_series(1, 2000) i) s`);
      const filter = c.readFilter(f.b);
      const check = layout === 'cuckoo' ? 'cuckoo_contains(f, k)' : 'f @> k';
      const { rows } = await db.query(
        `SELECT k::text AS kt, ${check} AS server, i <= 2000 AS added
           FROM (SELECT i, ${expr} AS k FROM generate_series(1, 4000) i) s,
                (SELECT $1::bytea::${layout === 'cuckoo' ? 'cuckoofilter' : 'bloomfilter'} AS f) g`, [f.b]);
      let disagree = 0;
      let missed = 0;
      for (const r of rows) {
        const key = type === 'timestamptz' ? r.kt.replace(/\+00$/, '+00:00') : r.kt;
        const mine = filter.contains(type === 'bytea' ? key : key, type);
        if (mine !== r.server) disagree++;
        if (r.added && !mine) missed++;
      }
      assert.strictEqual(missed, 0, `${layout} ${type}: no false negative`);
      assert.strictEqual(disagree, 0, `${layout} ${type}: the same answers as the server`);
    }
  });
}

test('GuardCopy: load, deltas, reloads, the guard\'s own bytes', async () => {
  await db.query('CREATE TABLE users (id int8, name text UNIQUE)');
  await db.query("INSERT INTO users SELECT i, 'user' || i FROM generate_series(1, 20000) i");
  await db.query('CREATE INDEX users_guard ON users USING bloomguard (name)');
  const serverBytes = async () => (await db.query("SELECT bloom_guard_filter('users_guard')::bytea AS b")).rows[0].b;
  const copy = await c.GuardCopy.load(db, 'users_guard');
  assert.ok(copy.buf.equals(await serverBytes()));
  assert.strictEqual(await copy.refresh(), 64 * (copy.layers.length + 1), 'nothing changed: the headers only');
  await db.query("INSERT INTO users VALUES (0, 'alice'), (-1, 'bob')");
  const got = await copy.refresh();
  assert.ok(got < copy.nbytes / 2, `a delta (${got} of ${copy.nbytes} bytes)`);
  assert.ok(copy.buf.equals(await serverBytes()), 'patched copy = the guard\'s filter');
  assert.ok(copy.mightContain('alice') && copy.mightContain('bob'));
  const { rows } = await db.query('SELECT name FROM users');
  assert.strictEqual(rows.filter((r) => !copy.mightContain(r.name)).length, 0, 'no false negative');
  let fp = 0;
  for (let i = 0; i < 10000; i++) if (copy.mightContain(`new${i}`)) fp++;
  assert.ok(fp < 200, `about 1% "maybe" for absent names (${fp} of 10000)`);
  await db.query("INSERT INTO users SELECT i, 'more' || i FROM generate_series(1, 60000) i");
  const whole = await copy.refresh();
  assert.strictEqual(whole, copy.nbytes, 'a new layer: the whole filter');
  assert.ok(copy.buf.equals(await serverBytes()));
  await db.query('REINDEX INDEX users_guard');
  assert.strictEqual(await copy.refresh(), copy.nbytes, 'REINDEX: the whole filter');
  assert.throws(() => copy.mightContain(42), c.KeyKindError);
  await assert.rejects(db.query("SELECT * FROM bloom_guard_changes('users_guard', 'junk')"), /invalid guard filter version/);
});

test('loadValue', async () => {
  const f = await c.loadValue(db, "SELECT bloom_agg(x) FROM unnest($1::text[]) x", [['a', 'b']]);
  assert.ok(f.contains('a') && f.contains('b'));
  await assert.rejects(c.loadValue(db, 'SELECT NULL::bloomfilter'), /no filter/);
});
