'use strict';
// Reading bloomfilter and cuckoofilter values (the bytes of value::bytea):
// their headers validated, keys checked as the server's @> checks them.
// doc/format.md is the specification.

const { xxh3_64, xxh3_128 } = require('./hash');
const { KIND, KIND_NAMES, KeyKindError, probeForms } = require('./keys');

const FORMAT_VERSIONS = [1, 2]; // read; 2 is what the server writes
const HEADER = 64;
const FAMILY = { BLOOM: 1, COUNTING: 2, CUCKOO: 3, SCALABLE: 4 };
const LAYOUT = { BLOCKED: 1, CLASSIC: 2, COUNTING: 3 };
const MUL32 = 0x9E3779B1;
const GOLDEN64 = 0x9E3779B97F4A7C15n;

class FormatError extends Error {}

function u64(buf, at) {
  const v = buf.readBigUInt64LE(at);
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new FormatError(`a 64-bit field at byte ${at} is too large for this reader`);
  return Number(v);
}

// The fields of a 64-byte header, with the checks every family shares.
function header(buf, at = 0) {
  if (buf.length - at < HEADER) throw new FormatError(`value is ${buf.length - at} bytes, shorter than the 64-byte header`);
  if (buf.toString('latin1', at, at + 4) !== 'BLMF') throw new FormatError('bad magic bytes (expected "BLMF")');
  const h = {
    version: buf[at + 4], family: buf[at + 5], layout: buf[at + 6], keyKind: buf[at + 7],
    hashes: buf.readUInt16LE(at + 8), flags: buf.readUInt16LE(at + 10), layers: buf.readUInt32LE(at + 12),
    nbits: u64(buf, at + 16), capacity: buf.readBigUInt64LE(at + 24), fpr: buf.readDoubleLE(at + 32),
    added: buf.readBigUInt64LE(at + 40),
  };
  if (!FORMAT_VERSIONS.includes(h.version)) {
    throw new FormatError(`unrecognized format version ${h.version} (this reader reads versions 1 to 2)`);
  }
  if (h.flags !== 0) throw new FormatError(`unrecognized flags 0x${h.flags.toString(16)} (no format version defines flags)`);
  if (h.keyKind > KIND.TIMESTAMPTZ) throw new FormatError(`unrecognized key kind ${h.keyKind}`);
  if (!(h.fpr > 0 && h.fpr < 1)) throw new FormatError('target false-positive rate out of range (0, 1)');
  if (h.capacity < 1n) throw new FormatError('capacity is 0');
  return h;
}

// (hi * n) >> 32 for hi < 2^32 and n < 2^32, exactly.
function mulHigh32(hi, n) {
  const a = Math.floor(hi / 65536);
  const b = hi % 65536;
  const u = a * n;
  const t = b * n;
  return Math.floor(u / 65536) + Math.floor(((u % 65536) * 65536 + t) / 4294967296);
}

function checkKind(filterKind, kind) {
  if (filterKind !== KIND.NONE && kind !== filterKind) {
    throw new KeyKindError(`key of key kind ${KIND_NAMES[kind]} does not match the filter's key kind ${KIND_NAMES[filterKind]}`);
  }
}

// A family 1 or 2 value (or a layer of a scalable one) over buf[at ...].
// A filter's check of a key (any family: f.keyKind, f.containsBytes):
// false: definitely not; true: maybe; null for a NULL key.  A key of
// another kind throws.
function containsKey(f, key, sqltype) {
  if (key === null || key === undefined) return null;
  const { kind, forms } = probeForms(key, sqltype);
  checkKind(f.keyKind, kind);
  if (f.keyKind === KIND.NONE) return false;
  return forms.some((b) => f.containsBytes(b));
}

class BloomFilter {
  constructor(buf, at = 0, inLayer = false) {
    const h = header(buf, at);
    if (h.family !== FAMILY.BLOOM && h.family !== FAMILY.COUNTING) throw new FormatError(`filter family ${h.family} is not a Bloom filter`);
    if ((h.family === FAMILY.COUNTING) !== (h.layout === LAYOUT.COUNTING) || h.layout < 1 || h.layout > 3) {
      throw new FormatError(`layout ${h.layout} does not belong to family ${h.family}`);
    }
    if (h.hashes < 1 || h.hashes > 64) throw new FormatError(`hash count ${h.hashes} is out of range 1..64`);
    if (h.layers !== 1) throw new FormatError(`layer count ${h.layers} is not supported (a filter of family ${h.family} has exactly 1 layer)`);
    const align = h.layout === LAYOUT.CLASSIC ? 64 : 512;
    if (h.nbits === 0 || h.nbits % align) throw new FormatError(`bit count ${h.nbits} is not a positive multiple of ${align}`);
    if (!inLayer && buf.length - at !== HEADER + h.nbits / 8) {
      throw new FormatError(`length ${buf.length - at} does not match bit count ${h.nbits} (expected ${HEADER + h.nbits / 8} bytes)`);
    }
    Object.assign(this, h);
    this.buf = buf;
    this.bits = at + HEADER; // first byte of the bits
    this.length = HEADER + h.nbits / 8;
  }

  containsBytes(canon) {
    const { buf, bits, hashes: k } = this;
    if (this.layout === LAYOUT.CLASSIC) {
      const { lo, hi } = xxh3_128(canon);
      const m = BigInt(this.nbits);
      let x = Number(lo % m);
      let y = Number(hi % m);
      const mm = this.nbits;
      for (let i = 1; i <= k; i++) {
        if (!((buf[bits + (x >>> 3)] >> (x & 7)) & 1)) return false;
        x = (x + y) % mm;
        y = (y + i) % mm;
      }
      return true;
    }
    const h = xxh3_64(canon);
    const nblocks = this.nbits / 512;
    const block = mulHigh32(h.hi, nblocks);
    let s = (h.lo | 1) >>> 0;
    if (this.layout === LAYOUT.COUNTING) {
      const first = bits + block * 64;
      for (let i = 0; i < k; i++) {
        s = Math.imul(s, MUL32) >>> 0;
        const c = s >>> 25;
        if (!((buf[first + (c >>> 1)] >> ((c & 1) * 4)) & 0x0F)) return false;
      }
      return true;
    }
    const first = bits + block * 64;
    for (let i = 0; i < k; i++) {
      s = Math.imul(s, MUL32) >>> 0;
      const p = s >>> 23;
      if (!((buf[first + (p >>> 3)] >> (p & 7)) & 1)) return false;
    }
    return true;
  }

  contains(key, sqltype) { return containsKey(this, key, sqltype); }
}

// Family 4: an outer header, then layers, each a complete family 1 value.
class ScalableFilter {
  constructor(buf) {
    const h = header(buf, 0);
    if (h.family !== FAMILY.SCALABLE) throw new FormatError(`filter family ${h.family} is not a scalable filter`);
    if (h.layout !== LAYOUT.BLOCKED && h.layout !== LAYOUT.CLASSIC) throw new FormatError(`layout ${h.layout} of a scalable filter is not blocked or classic`);
    if (h.hashes !== 0) throw new FormatError(`hash count ${h.hashes} of a scalable filter is not 0`);
    if (h.layers < 1 || h.layers > 64) throw new FormatError(`layer count ${h.layers} is out of range 1..64`);
    Object.assign(this, h);
    this.buf = buf;
    this.layerList = [];
    let at = HEADER;
    let nbits = 0;
    for (let i = 0; i < h.layers; i++) {
      const layer = new BloomFilter(buf, at, true);
      if (layer.layout !== h.layout || layer.keyKind !== h.keyKind) throw new FormatError(`layer ${i} has another layout or key kind`);
      if (at + layer.length > buf.length) throw new FormatError(`layer ${i} of ${h.layers} is truncated`);
      this.layerList.push(layer);
      at += layer.length;
      nbits += layer.nbits;
    }
    if (at !== buf.length) throw new FormatError(`length ${buf.length} does not match the layers' ${at} bytes`);
    if (nbits !== h.nbits) throw new FormatError(`bit count ${h.nbits} is not the layers' sum ${nbits}`);
  }

  containsBytes(canon) { return this.layerList.some((l) => l.containsBytes(canon)); }

  contains(key, sqltype) { return containsKey(this, key, sqltype); }
}

// Family 3, the cuckoofilter type: buckets of 4 slots of f-bit fingerprints.
class CuckooFilter {
  constructor(buf) {
    const h = header(buf, 0);
    if (h.family !== FAMILY.CUCKOO) throw new FormatError(`filter family ${h.family} is not a cuckoo filter (family 3)`);
    if (h.layout !== 1) throw new FormatError(`unrecognized cuckoo layout ${h.layout} (expected 1, buckets of 4 slots)`);
    if (h.layers !== 1) throw new FormatError(`layer count ${h.layers} is not supported (a cuckoo filter has 1)`);
    const f = h.hashes;
    const nb = h.nbits; // the bucket count, at offset 16
    if (f < 4 || f > 32 || nb < 1 || nb > 2 ** 32) throw new FormatError('fingerprint bits or bucket count out of range');
    const bytes = Math.ceil((nb * 4 * f) / 8);
    if (buf.length - HEADER !== bytes) throw new FormatError(`length ${buf.length} does not match ${nb} buckets of ${f}-bit slots`);
    Object.assign(this, h);
    this.fpBits = f;
    this.nbuckets = nb;
    this.count = Number(h.added);
    this.buf = buf;
  }

  slot(j) {
    const x = j * this.fpBits;
    const at = HEADER + Math.floor(x / 8);
    let w = 0;
    for (let i = 4; i >= 0; i--) w = w * 256 + (this.buf[at + i] || 0);
    return Math.floor(w / 2 ** (x % 8)) % 2 ** this.fpBits;
  }

  // The number of slots of the key's two buckets holding its fingerprint.
  countBytes(canon) {
    const { hi, lo } = xxh3_64(canon);
    const f = this.fpBits;
    const nb = BigInt(this.nbuckets);
    const fp = Number((BigInt(lo) & ((1n << BigInt(f)) - 1n))) || 1;
    const i1 = Number((BigInt(hi) * nb) >> 32n);
    const g = Number(((((BigInt(fp) * GOLDEN64) & 0xFFFFFFFFFFFFFFFFn) >> 32n) * nb) >> 32n);
    const i2 = (g + this.nbuckets - i1) % this.nbuckets;
    let n = 0;
    for (const b of i1 === i2 ? [i1] : [i1, i2]) {
      for (let s = 0; s < 4; s++) if (this.slot(b * 4 + s) === fp) n++;
    }
    return n;
  }

  containsBytes(canon) { return this.countBytes(canon) > 0; }

  contains(key, sqltype) { return containsKey(this, key, sqltype); }
}

// The filter the bytes hold, by family.
function readFilter(bytes) {
  const buf = Buffer.from(bytes);
  if (buf.length < 6) throw new FormatError(`value is ${buf.length} bytes, shorter than the 64-byte header`);
  if (buf[5] === FAMILY.SCALABLE) return new ScalableFilter(buf);
  if (buf[5] === FAMILY.CUCKOO) return new CuckooFilter(buf);
  return new BloomFilter(buf);
}

module.exports = {
  FORMAT_VERSIONS, FormatError, BloomFilter, ScalableFilter, CuckooFilter, readFilter, header, mulHigh32, HEADER,
};
