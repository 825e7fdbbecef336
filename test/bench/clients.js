'use strict';
// test/bench/clients.js -- the Node client's copy of a guard, measured (run
// by test/bench/clients.sh).  Prints table rows: the copy's load, memory, and
// a check in process against one gated lookup per round trip.
const path = require('path');
const { Client } = require(path.join(__dirname, '../../clients/node/node_modules/pg'));
const bf = require('../../clients/node');

const ROWS = Number(process.env.BF_ROWS || 1000000);

function names(n) {
  let seed = 42;
  const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
  const out = [];
  for (let i = 0; i < n; i++) {
    out.push(rnd() < 0.1 ? `user${1 + Math.floor(rnd() * ROWS)}` : `new${Math.floor(rnd() * 1e9)}`);
  }
  return out;
}

(async () => {
  const db = new Client({ database: process.env.BF_DB || 'bench' });
  await db.connect();
  const heap0 = process.memoryUsage();
  let t = process.hrtime.bigint();
  const copy = await bf.GuardCopy.load(db, 'users_guard');
  const loadMs = Number(process.hrtime.bigint() - t) / 1e6;
  const heap1 = process.memoryUsage();
  const keys = names(200000);
  t = process.hrtime.bigint();
  let maybe = 0;
  for (const k of keys) if (copy.mightContain(k)) maybe++;
  const ns = Number(process.hrtime.bigint() - t) / keys.length;
  const look = (k) => db.query({ name: 'look', text: 'SELECT EXISTS (SELECT 1 FROM users WHERE username = $1)', values: [k] });
  await look('warm-up');
  t = process.hrtime.bigint();
  for (const k of keys.slice(0, 5000)) await look(k);
  const trip = Number(process.hrtime.bigint() - t) / 5000;
  await db.end();
  const grown = (heap1.rss - heap0.rss) / 1024;
  console.log(`| copy (Node): bytes held / process growth / first load | ${Math.round(copy.nbytes / 1024)} kB / ${Math.round(grown)} kB / ${Math.round(loadMs)} ms |`);
  console.log(`| check in process (Node), 90% absent | ${Math.round(ns)} ns (${maybe} "maybe" of ${keys.length}) |`);
  console.log(`| one gated lookup per round trip (Node, prepared) | ${(trip / 1000).toFixed(1)} µs (${Math.round(trip / ns)}x the in-process check) |`);
})().catch((e) => { console.error(e); process.exit(1); });
