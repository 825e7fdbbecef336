'use strict';
// A guard index's filter kept in the application: loaded once, checked in
// process, kept current with the parts that changed (bloom_guard_changes).
//
// Staleness, exactly: a "no" is exact for every row committed before the
// fetch that returned the copy's version began; rows committed later may be
// missing until the next refresh.  For "is this username taken?": check the
// copy; on "no" insert and let the unique constraint arbitrate (catch
// SQLSTATE 23505); on "maybe" ask the database.

const { init } = require('./hash');
const { FormatError, ScalableFilter, HEADER, mulHigh32 } = require('./format');
const { KIND, KIND_NAMES, KeyKindError, probeForms, plainText } = require('./keys');
const { xxh3_64 } = require('./hash');

const MUL32 = 0x9E3779B1;

class GuardCopy {
  // client: a node-postgres Client or Pool (anything with query(text, values)).
  constructor(client, guard) {
    this.client = client;
    this.guard = guard;
    this.version = null;
    this.keyKind = KIND.NONE;
    this.buf = Buffer.alloc(0);
    this.layers = []; // [first byte of the bits, blocks, k]
  }

  static async load(client, guard) {
    await init();
    const copy = new GuardCopy(client, guard);
    await copy.refresh();
    return copy;
  }

  // Bring the copy up to date; resolves to the bytes received.
  async refresh() {
    const res = await this.client.query(
      'SELECT version, whole, byte_offset, bytes FROM bloom_guard_changes($1::regclass, $2)',
      [this.guard, this.version]);
    let received = 0;
    let version = null;
    let whole = null;
    const parts = [];
    for (const row of res.rows) {
      received += row.bytes.length;
      version = row.version;
      if (row.whole) whole = row.bytes;
      else parts.push(row);
    }
    if (whole !== null) {
      const f = new ScalableFilter(Buffer.from(whole)); // validates every header
      if (f.layout !== 1) throw new FormatError("a guard's filter is a scalable blocked filter");
      this.buf = f.buf;
    }
    for (const { byte_offset: offset, bytes } of parts) {
      const at = Number(offset);
      if (at < 0 || at + bytes.length > this.buf.length) {
        throw new FormatError(`a change at byte ${at} (${bytes.length} bytes) is outside the copy of ${this.buf.length} bytes`);
      }
      bytes.copy(this.buf, at);
    }
    if (res.rows.length) this.readHeaders();
    this.version = version;
    return received;
  }

  readHeaders() {
    const b = this.buf;
    this.keyKind = b[7];
    this.added = b.readBigUInt64LE(40);
    const n = b.readUInt32LE(12);
    const layers = [];
    let at = HEADER;
    for (let i = 0; i < n; i++) {
      const k = b.readUInt16LE(at + 8);
      const nbits = Number(b.readBigUInt64LE(at + 16));
      layers.push([at + HEADER, nbits / 512, k]);
      at += HEADER + nbits / 8;
    }
    if (at !== b.length) throw new FormatError(`the copy's headers describe ${at} bytes, not ${b.length}`);
    this.layers = layers;
  }

  // false: no row committed before the copy's version holds the key
  // (definitely not); true: maybe; null for null.
  mightContain(key, sqltype) {
    if (key === null || key === undefined) return null;
    if (this.keyKind === KIND.TEXT && plainText(key, sqltype)) return this.testHash(xxh3_64(key));
    const { kind, forms } = probeForms(key, sqltype);
    if (this.keyKind !== KIND.NONE && kind !== this.keyKind) {
      throw new KeyKindError(`key of key kind ${KIND_NAMES[kind]} does not match the guard's key kind ${KIND_NAMES[this.keyKind]}`);
    }
    return forms.some((canon) => this.testHash(xxh3_64(canon)));
  }

  // Does some layer have all the bits of the hash?
  testHash(h) {
    const b = this.buf;
    const s0 = (h.lo | 1) >>> 0;
    for (const [bits, nblocks, k] of this.layers) {
      const first = bits + mulHigh32(h.hi, nblocks) * 64;
      let s = s0;
      let i = 0;
      for (; i < k; i++) {
        s = Math.imul(s, MUL32) >>> 0;
        const p = s >>> 23;
        if (!((b[first + (p >>> 3)] >> (p & 7)) & 1)) break;
      }
      if (i === k) return true;
    }
    return false;
  }

  get nbytes() { return this.buf.length; }
}

module.exports = { GuardCopy };
