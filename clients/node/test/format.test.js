'use strict';
// The reader without a server: the golden vectors of test/pgtap/golden.sql
// and doc/format.md, the canonical key bytes, the format versions.
const test = require('node:test');
const assert = require('node:assert');
const c = require('..');
const { xxh3_64, xxh3_128 } = require('../lib/hash');

const hex = (...parts) => Buffer.from(parts.join(''), 'hex');

// bloom_add_all(bloom_empty(100, 0.01, layout), keys), version 2
const BLOCKED_TEXT = hex(
  '424c4d46020101020700000001000000000400000000000064000000000000007b14ae47e17a843f020000000000000000000000000000000000000000000000',
  '00000000000000000000000000000000000020010000000000002000040008000000000000000022008000000000000040000000000000010000010220000000',
  '00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000');
const BLOCKED_INT = hex(
  '424c4d46020101010700000001000000000400000000000064000000000000007b14ae47e17a843f030000000000000000000000000000000000000000000000',
  '00000010000000000000000000000000000000008000000000000000002000000000000000400000000000000040400000000000000000000000000010000000',
  '00000000000000400008000000001000000000100408000000180040010000000000000000001000000040000000000000010000100000000000000000000000');
const CLASSIC_TEXT = hex(
  '424c4d46020102020700000001000000c00300000000000064000000000000007b14ae47e17a843f020000000000000000000000000000000000000000000000',
  '00100200000000000000040000000000000000000000000010000008000000000000000000000000000000002000000080000000000000000000000000000000',
  '0010000000000000000104000000000080000000000000000000000000000000900000000000000000000000000000000008000000000000');

function setBits(buf) {
  const out = [];
  for (let j = 0; j < (buf.length - 64) * 8; j++) if ((buf[64 + (j >> 3)] >> (j & 7)) & 1) out.push(j);
  return out;
}

test.before(() => c.init());

test('XXH3 golden hashes', () => {
  const h = xxh3_64(Buffer.from('alice'));
  assert.strictEqual(((BigInt(h.hi) << 32n) | BigInt(h.lo)).toString(16), '4da10dd61a0116b0');
  const w = xxh3_128(Buffer.from('alice'));
  assert.strictEqual(w.lo.toString(16), 'c9a1342ad0e35dd2');
  assert.strictEqual(w.hi.toString(16), '48bb949a3dd26afa');
});

test('golden filters: their keys are found', () => {
  const b = c.readFilter(BLOCKED_TEXT);
  assert.ok(b.contains('alice') && b.contains('bob'));
  assert.strictEqual(b.version, 2);
  const i = c.readFilter(BLOCKED_INT);
  for (const k of [42, -1, 0]) assert.ok(i.contains(k, 'int4'), String(k));
  assert.ok(i.contains(4294967295, 'oid'), '(-1)::int4 = 4294967295::oid');
  assert.throws(() => i.contains('x'), c.KeyKindError);
  const cl = c.readFilter(CLASSIC_TEXT);
  assert.ok(cl.contains('alice') && cl.contains('bob'));
});

test('blocked positions of alice: block 0, bits 313 213 152 473 440 149', () => {
  const buf = Buffer.from(BLOCKED_TEXT.subarray(0, 64 + 128));
  buf.fill(0, 64);
  buf.writeBigUInt64LE(1n, 40);
  for (const p of [313, 213, 152, 473, 440, 149]) buf[64 + (p >> 3)] |= 1 << (p & 7);
  const f = c.readFilter(buf);
  assert.ok(f.contains('alice'));
  buf[64 + (313 >> 3)] &= ~(1 << (313 & 7));
  assert.ok(!c.readFilter(buf).contains('alice'), 'each bit is needed');
});

test('classic positions of alice: 594 12 391 772 196 584 17', () => {
  const buf = Buffer.from(CLASSIC_TEXT);
  buf.fill(0, 64);
  for (const p of [594, 12, 391, 772, 196, 584, 17]) buf[64 + (p >> 3)] |= 1 << (p & 7);
  assert.ok(c.readFilter(buf).contains('alice'));
  assert.deepStrictEqual(setBits(buf), [12, 17, 196, 391, 584, 594, 772]);
});

test('cuckoo golden: alice fingerprint 688, bob 229 twice', () => {
  const h = Buffer.alloc(64);
  h.write('BLMF', 0, 'latin1');
  h[4] = 2; h[5] = 3; h[6] = 1; h[7] = 2; h.writeUInt16LE(10, 8); h.writeUInt32LE(1, 12);
  h.writeBigUInt64LE(27n, 16); h.writeBigUInt64LE(100n, 24); h.writeDoubleLE(0.01, 32); h.writeBigUInt64LE(3n, 40);
  const payload = Buffer.from('00000000000000000000e59403000000000000000000000000000000000000000000000000000000b002'
    + '0'.repeat(186), 'hex');
  const f = c.readFilter(Buffer.concat([h, payload]));
  assert.ok(f instanceof c.CuckooFilter);
  assert.strictEqual(f.countBytes(Buffer.from('bob')), 2);
  assert.strictEqual(f.countBytes(Buffer.from('alice')), 1);
  assert.ok(!f.contains('carol'));
});

test('format versions: 1 and 2 read, 3 refused', () => {
  const v1 = Buffer.from(BLOCKED_TEXT);
  v1[4] = 1;
  assert.strictEqual(c.readFilter(v1).version, 1);
  assert.ok(c.readFilter(v1).contains('alice'));
  const v3 = Buffer.from(BLOCKED_TEXT);
  v3[4] = 3;
  assert.throws(() => c.readFilter(v3), /unrecognized format version 3/);
  const fl = Buffer.from(BLOCKED_TEXT);
  fl[10] = 1;
  assert.throws(() => c.readFilter(fl), /flags/);
  assert.throws(() => c.readFilter(BLOCKED_TEXT.subarray(0, 100)), /length/);
});

test('canonical bytes', () => {
  const cb = (k, t) => c.canonicalBytes(k, t).bytes.toString('hex');
  assert.strictEqual(cb(4294967295, 'oid'), 'ffffffff00000000');
  assert.strictEqual(cb(-1, 'int4'), 'ffffffffffffffff');
  assert.deepStrictEqual(c.probeForms(-1, 'int4').forms.map((f) => f.toString('hex')), ['ffffffffffffffff', 'ffffffff00000000']);
  assert.strictEqual(cb('ab  ', 'bpchar'), '6162');
  assert.deepStrictEqual(c.probeForms('ab ', 'text').forms.map(String), ['ab ', 'ab']);
  assert.strictEqual(c.probeForms('é'.repeat(40), 'text').forms[1].length, 62, 'clipped at a character boundary');
  assert.strictEqual(cb(-0, 'float8'), '0000000000000000');
  assert.strictEqual(cb(NaN, 'float8'), '000000000000f87f');
  assert.strictEqual(cb(0.1, 'float4'), Buffer.from(new Float64Array([Math.fround(0.1)]).buffer).toString('hex'));
  for (const [i, o] of [['1.50', '1.5'], ['-0.00', '0'], ['1e3', '1000'], ['0.0015e1', '0.015'], ['NaN', 'NaN'],
    ['-inf', '-Infinity'], ['007.0', '7'], ['-12.3400', '-12.34']]) assert.strictEqual(c.numericText(i), o, i);
  assert.strictEqual(cb('2000-01-01', 'date'), '0000000000000000');
  assert.strictEqual(cb('2000-01-02', 'date'), '0100000000000000');
  assert.strictEqual(cb('infinity', 'date'), 'ffffff7f00000000');
  assert.strictEqual(c.canonicalBytes('2000-01-01 00:00:01+01', 'timestamptz').bytes.readBigInt64LE(), -3599000000n);
  assert.strictEqual(c.canonicalBytes(new Date(Date.UTC(2000, 0, 1, 0, 0, 1)), 'timestamptz').bytes.readBigInt64LE(), 1000000n);
  assert.strictEqual(cb('00010203-0405-0607-0809-0a0b0c0d0e0f', 'uuid'), '000102030405060708090a0b0c0d0e0f');
  assert.strictEqual(cb(true), '01');
  assert.throws(() => c.canonicalBytes({}), TypeError);
  assert.throws(() => c.canonicalBytes(1, 'citext'), c.KeyKindError);
});
