'use strict';
// Keys to canonical bytes, as the server makes them (doc/format.md, "Keys"):
// a key kind per SQL type, its canonical bytes, and the forms a check tests
// (the key may equal keys of other bytes under PostgreSQL's =).

const KIND = {
  NONE: 0, INTEGER: 1, TEXT: 2, BYTEA: 3, UUID: 4, BOOLEAN: 5, FLOAT: 6,
  NUMERIC: 7, DATE: 8, TIMESTAMP: 9, TIMESTAMPTZ: 10,
};
const KIND_NAMES = ['none', 'integer', 'text', 'bytea', 'uuid', 'boolean', 'float',
  'numeric', 'date', 'timestamp', 'timestamptz'];

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const NAMEDATALEN = 64;
const DATE_NOBEGIN = -2147483648n;
const DATE_NOEND = 2147483647n;
const TS_NOBEGIN = INT64_MIN;
const TS_NOEND = INT64_MAX;
const EPOCH_2000_MS = 946684800000n; // 2000-01-01T00:00:00Z

class KeyKindError extends TypeError {}

function int64le(v) {
  if (v < INT64_MIN || v > INT64_MAX) throw new RangeError(`${v} is out of the int64 range`);
  const b = Buffer.alloc(8);
  b.writeBigInt64LE(v);
  return b;
}

function toBigInt(v, what) {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) throw new RangeError(`${what} key ${v} is not a safe integer: pass a BigInt`);
    return BigInt(v);
  }
  if (typeof v === 'string' && /^\s*[+-]?\d+\s*$/.test(v)) return BigInt(v.trim());
  throw new TypeError(`${what} key must be a number, a BigInt or a string of digits`);
}

function integerBytes(v) { return int64le(toBigInt(v, 'an integer')); }

function oidBytes(v) {
  const n = toBigInt(v, 'an oid');
  if (n < 0n || n > 0xFFFFFFFFn) throw new RangeError(`oid ${n} is out of range 0..4294967295`);
  return int64le(n);
}

function textBytes(s) {
  if (Buffer.isBuffer(s) || s instanceof Uint8Array) return Buffer.from(s);
  if (typeof s !== 'string') throw new TypeError('a text key must be a string');
  return Buffer.from(s, 'utf8');
}

function trimBlanks(b) {
  let n = b.length;
  while (n > 0 && b[n - 1] === 0x20) n--;
  return b.subarray(0, n);
}

// Clipped to 63 bytes at a UTF-8 character boundary, as name input clips.
function clipName(b) {
  if (b.length < NAMEDATALEN) return b;
  let n = NAMEDATALEN - 1;
  while (n > 0 && (b[n] & 0xC0) === 0x80) n--;
  return b.subarray(0, n);
}

function byteaBytes(b) {
  if (typeof b === 'string') {
    if (!/^\\x([0-9a-fA-F]{2})*$/.test(b)) throw new TypeError("a bytea key given as a string must be in hex form '\\x...'");
    return Buffer.from(b.slice(2), 'hex');
  }
  if (Buffer.isBuffer(b) || b instanceof Uint8Array) return Buffer.from(b);
  throw new TypeError('a bytea key must be a Buffer or Uint8Array');
}

function uuidBytes(u) {
  if ((Buffer.isBuffer(u) || u instanceof Uint8Array) && u.length === 16) return Buffer.from(u);
  if (typeof u === 'string') {
    const hex = u.trim().replace(/^\{|\}$/g, '').replace(/-/g, '');
    if (/^[0-9a-fA-F]{32}$/.test(hex)) return Buffer.from(hex, 'hex');
  }
  throw new TypeError('a uuid key must be a string (its text form) or 16 bytes');
}

const BOOL_TEXT = {
  t: true, true: true, y: true, yes: true, on: true, 1: true,
  f: false, false: false, n: false, no: false, off: false, 0: false,
};

function booleanBytes(v) {
  if (typeof v === 'string') {
    const t = v.trim().toLowerCase();
    if (!(t in BOOL_TEXT)) throw new TypeError(`not a boolean: ${v}`);
    v = BOOL_TEXT[t];
  }
  if (typeof v !== 'boolean') throw new TypeError('a boolean key must be a boolean');
  return Buffer.from([v ? 1 : 0]);
}

function floatBytes(x, float4) {
  if (typeof x === 'string') {
    const t = x.trim().toLowerCase();
    x = t === 'nan' ? NaN : t === 'infinity' || t === '+infinity' || t === 'inf' ? Infinity
      : t === '-infinity' || t === '-inf' ? -Infinity : Number(t);
    if (Number.isNaN(x) && t !== 'nan') throw new TypeError(`not a number: ${t}`);
  }
  if (typeof x !== 'number') throw new TypeError('a float key must be a number');
  if (float4) {
    if (Number.isFinite(x) && Math.abs(x) >= 3.4028235677973366e38) throw new RangeError(`${x} is out of range for type real`);
    x = Math.fround(x);
  }
  const b = Buffer.alloc(8);
  if (Number.isNaN(x)) b.writeBigUInt64LE(0x7FF8000000000000n);
  else b.writeDoubleLE(x === 0 ? 0 : x); // -0 equals 0
  return b;
}

// numeric_out's plain notation without trailing fractional zeros or point.
function numericText(v) {
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) throw new TypeError('a numeric key given as a number must be a safe integer; pass a string');
    return String(v === 0 ? 0 : v);
  }
  if (typeof v !== 'string') throw new TypeError('a numeric key must be a string, a BigInt or an integer');
  const t = v.trim();
  const low = t.toLowerCase();
  if (low === 'nan') return 'NaN';
  if (['inf', '+inf', 'infinity', '+infinity'].includes(low)) return 'Infinity';
  if (low === '-inf' || low === '-infinity') return '-Infinity';
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(t);
  if (!m || (m[2] + (m[3] || '')) === '') throw new TypeError(`not a numeric: ${v}`);
  const digits = m[2] + (m[3] || '');
  const exp = m[4] ? Number(m[4]) : 0;
  if (Math.abs(exp) > 1000000) throw new RangeError(`numeric exponent ${exp} is out of range`);
  const point = m[2].length + exp;
  let ip;
  let fp;
  if (point <= 0) { ip = '0'; fp = '0'.repeat(-point) + digits; } else if (point >= digits.length) {
    ip = digits + '0'.repeat(point - digits.length); fp = '';
  } else { ip = digits.slice(0, point); fp = digits.slice(point); }
  ip = ip.replace(/^0+/, '') || '0';
  fp = fp.replace(/0+$/, '');
  const s = ip + (fp ? '.' + fp : '');
  return (m[1] === '-' && s !== '0' ? '-' : '') + s;
}

// Days since 2000-01-01 of a proleptic Gregorian date (y astronomical).
function daysFromCivil(y, mo, d) {
  y -= mo <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468 - 10957;
}

function year(y, bc) {
  const n = Number(y);
  if (n === 0) throw new RangeError('year 0 does not exist (1 BC precedes 1 AD)');
  return bc ? 1 - n : n;
}

const DATE_RE = /^(\d{4,})-(\d{2})-(\d{2})( BC)?$/;
const TS_RE = /^(\d{4,})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(?:([+-])(\d{2})(?::?(\d{2})(?::?(\d{2}))?)?|Z)?( BC)?$/;

// A Date's local calendar fields (node-postgres reads date and timestamp
// columns as local time) as microseconds since 2000-01-01 00:00.
function localUsecs(d) {
  const days = daysFromCivil(d.getFullYear(), d.getMonth() + 1, d.getDate());
  const secs = ((days * 24 + d.getHours()) * 60 + d.getMinutes()) * 60 + d.getSeconds();
  return BigInt(secs) * 1000000n + BigInt(d.getMilliseconds()) * 1000n;
}

function dateDays(v) {
  if (v instanceof Date) return BigInt(daysFromCivil(v.getFullYear(), v.getMonth() + 1, v.getDate()));
  if (typeof v === 'number' || typeof v === 'bigint') return toBigInt(v, 'a date');
  if (typeof v !== 'string') throw new TypeError('a date key must be a Date, a number of days or a string');
  const t = v.trim();
  if (t.toLowerCase() === 'infinity') return DATE_NOEND;
  if (t.toLowerCase() === '-infinity') return DATE_NOBEGIN;
  const m = DATE_RE.exec(t);
  if (!m) throw new TypeError(`not an ISO date: ${v}`);
  return BigInt(daysFromCivil(year(m[1], m[4]), Number(m[2]), Number(m[3])));
}

function tsTextUsecs(v, withTz) {
  const t = v.trim();
  if (t.toLowerCase() === 'infinity') return TS_NOEND;
  if (t.toLowerCase() === '-infinity') return TS_NOBEGIN;
  const m = TS_RE.exec(t);
  if (!m) throw new TypeError(`not an ISO timestamp: ${v}`);
  const days = daysFromCivil(year(m[1], m[12]), Number(m[2]), Number(m[3]));
  const secs = ((days * 24 + Number(m[4])) * 60 + Number(m[5])) * 60 + Number(m[6]);
  let us = BigInt(secs) * 1000000n + BigInt(m[7] ? m[7].padEnd(6, '0') : 0);
  const hasZone = m[8] !== undefined || /Z( BC)?$/.test(t);
  if (hasZone && !withTz) throw new TypeError(`a timestamp key has no time zone: ${v}`);
  if (!hasZone && withTz) throw new TypeError(`a timestamptz key needs a UTC offset: ${v}`);
  if (m[8] !== undefined) {
    const off = (Number(m[9]) * 60 + Number(m[10] || 0)) * 60 + Number(m[11] || 0);
    us -= BigInt(m[8] === '+' ? off : -off) * 1000000n;
  }
  return us;
}

function timestampUsecs(v) {
  if (v instanceof Date) return localUsecs(v);
  if (typeof v === 'number' || typeof v === 'bigint') return toBigInt(v, 'a timestamp');
  if (typeof v === 'string') return tsTextUsecs(v, false);
  throw new TypeError('a timestamp key must be a Date, a number of microseconds or a string');
}

function timestamptzUsecs(v) {
  if (v instanceof Date) return (BigInt(v.getTime()) - EPOCH_2000_MS) * 1000n;
  if (typeof v === 'number' || typeof v === 'bigint') return toBigInt(v, 'a timestamptz');
  if (typeof v === 'string') return tsTextUsecs(v, true);
  throw new TypeError('a timestamptz key must be a Date, a number of microseconds or a string');
}

// SQL type -> [key kind, canonical bytes]
const TYPES = {};
function def(names, kind, fn) { for (const n of names) TYPES[n] = [kind, fn]; }
def(['int2', 'smallint', 'int4', 'integer', 'int', 'int8', 'bigint'], KIND.INTEGER, integerBytes);
def(['oid'], KIND.INTEGER, oidBytes);
def(['text', 'bloom_literal'], KIND.TEXT, textBytes);
def(['varchar', 'bpchar', 'char'], KIND.TEXT, (s) => trimBlanks(textBytes(s)));
def(['name'], KIND.TEXT, (s) => clipName(textBytes(s)));
def(['bytea'], KIND.BYTEA, byteaBytes);
def(['uuid'], KIND.UUID, uuidBytes);
def(['boolean', 'bool'], KIND.BOOLEAN, booleanBytes);
def(['float4', 'real'], KIND.FLOAT, (x) => floatBytes(x, true));
def(['float8', 'double precision', 'float'], KIND.FLOAT, (x) => floatBytes(x, false));
def(['numeric'], KIND.NUMERIC, (v) => Buffer.from(numericText(v), 'ascii'));
def(['date'], KIND.DATE, (v) => int64le(dateDays(v)));
def(['timestamp'], KIND.TIMESTAMP, (v) => int64le(timestampUsecs(v)));
def(['timestamptz'], KIND.TIMESTAMPTZ, (v) => int64le(timestamptzUsecs(v)));

const KIND_DEFAULT_TYPE = {
  [KIND.INTEGER]: 'int8', [KIND.TEXT]: 'text', [KIND.BYTEA]: 'bytea', [KIND.UUID]: 'uuid',
  [KIND.BOOLEAN]: 'boolean', [KIND.FLOAT]: 'float8', [KIND.NUMERIC]: 'numeric',
  [KIND.DATE]: 'date', [KIND.TIMESTAMP]: 'timestamp', [KIND.TIMESTAMPTZ]: 'timestamptz',
};

// The SQL type a JavaScript value stands for.
function inferType(key) {
  switch (typeof key) {
    case 'bigint': return 'int8';
    case 'number': return Number.isInteger(key) ? 'int8' : 'float8';
    case 'string': return 'text';
    case 'boolean': return 'boolean';
    default:
      if (Buffer.isBuffer(key) || key instanceof Uint8Array) return 'bytea';
      if (key instanceof Date) return 'timestamptz';
      throw new TypeError('no key kind for this value; pass the SQL type');
  }
}

function resolveType(sqltype, key) {
  const t = sqltype === undefined || sqltype === null ? inferType(key) : sqltype;
  if (TYPES[t]) return t;
  const kind = KIND_NAMES.indexOf(t);
  if (kind > 0) return KIND_DEFAULT_TYPE[kind];
  throw new KeyKindError(`unknown key type ${JSON.stringify(t)}`);
}

function canonicalBytes(key, sqltype) {
  const t = resolveType(sqltype, key);
  const [kind, fn] = TYPES[t];
  return { kind, bytes: fn(key), type: t };
}

function distinct(forms) {
  const out = [];
  for (const f of forms) if (!out.some((o) => o.equals(f))) out.push(f);
  return out;
}

const SIGNED32 = ['int2', 'smallint', 'int4', 'integer', 'int'];

// A text key whose only form is its UTF-8 bytes (the common case): fewer
// than 22 UTF-16 units (so under 64 bytes) and not ending in a blank.  Its
// string is hashed as it is, with no copy.
function plainText(key, sqltype) {
  return typeof key === 'string' && key.length < 22 && key.charCodeAt(key.length - 1) !== 0x20 &&
    (sqltype === undefined || sqltype === null || sqltype === 'text' || sqltype === 'varchar' ||
      sqltype === 'bloom_literal');
}

// The canonical bytes a check tests: { kind, forms }.  Also a negative
// int2/int4 as the oid it equals (and an oid above 2^31 - 1 as the int4);
// a text, varchar or name key without trailing blanks; a text key (a
// string literal, for all a filter can tell) clipped to 63 bytes as name.
function probeForms(key, sqltype) {
  const { kind, bytes, type } = canonicalBytes(key, sqltype);
  if (SIGNED32.includes(type)) {
    const v = bytes.readBigInt64LE();
    return { kind, forms: v < 0n ? [bytes, int64le(v + 2n ** 32n)] : [bytes] };
  }
  if (type === 'oid') {
    const v = bytes.readBigInt64LE();
    return { kind, forms: v > 0x7FFFFFFFn ? [bytes, int64le(v - 2n ** 32n)] : [bytes] };
  }
  if (type === 'text' || type === 'bloom_literal' || type === 'varchar' || type === 'name') {
    const raw = type === 'name' ? clipName(textBytes(key)) : textBytes(key);
    const forms = [raw, trimBlanks(raw)];
    if (type === 'text' || type === 'bloom_literal') forms.push(clipName(raw));
    return { kind, forms: distinct(forms) };
  }
  return { kind, forms: [bytes] };
}

module.exports = {
  KIND, KIND_NAMES, KeyKindError, canonicalBytes, probeForms, plainText, numericText, inferType, clipName, trimBlanks,
};
