'use strict';
// XXH3 (seed 0) of canonical key bytes: XXH3-64 for the blocked and counting
// layouts and cuckoo filters, XXH3-128 for the classic layout.  From
// hash-wasm (WebAssembly, no native code); its hashers are created once, by
// init(), and used synchronously after.

const { createXXHash3, createXXHash128 } = require('hash-wasm');

let h64 = null;
let h128 = null;

async function init() {
  if (h64 === null) {
    h64 = await createXXHash3();
    h128 = await createXXHash128();
  }
}

function need() {
  if (h64 === null) throw new Error('bloomfilter-client: call await init() (or a load function) first');
}

// The 8 big-endian bytes of a digest as two unsigned 32-bit halves.
function halves(d, at) {
  return [((d[at] << 24) | (d[at + 1] << 16) | (d[at + 2] << 8) | d[at + 3]) >>> 0,
    ((d[at + 4] << 24) | (d[at + 5] << 16) | (d[at + 6] << 8) | d[at + 7]) >>> 0];
}

// XXH3-64 of bytes (or of a string's UTF-8 bytes): { hi, lo } (unsigned
// 32-bit halves).
function xxh3_64(bytes) {
  need();
  h64.init();
  h64.update(bytes);
  const [hi, lo] = halves(h64.digest('binary'), 0);
  return { hi, lo };
}

// XXH3-128 of bytes: { lo, hi } as BigInt (the digest is hi's bytes first).
function xxh3_128(bytes) {
  need();
  h128.init();
  h128.update(bytes);
  const d = h128.digest('binary');
  const [a, b] = halves(d, 0);
  const [c, e] = halves(d, 8);
  return { hi: (BigInt(a) << 32n) | BigInt(b), lo: (BigInt(c) << 32n) | BigInt(e) };
}

module.exports = { init, xxh3_64, xxh3_128 };
