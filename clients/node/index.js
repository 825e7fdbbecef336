'use strict';
// bloomfilter-client: the bloomfilter extension's filters, checked in the
// application.  GuardCopy keeps a guard index's filter current with the
// parts that changed; readFilter reads any stored bloomfilter or
// cuckoofilter value (the bytes of value::bytea).  A check answers as the
// server's @> does, from the same canonical key bytes: false is "definitely
// not", true "maybe".

const { init } = require('./lib/hash');
const {
  FORMAT_VERSIONS, FormatError, BloomFilter, ScalableFilter, CuckooFilter, readFilter,
} = require('./lib/format');
const { KeyKindError, canonicalBytes, probeForms, numericText } = require('./lib/keys');
const { GuardCopy } = require('./lib/guard');

// The filter the query's first column returns (a bloomfilter or
// cuckoofilter value, or its bytea cast).
async function loadValue(client, query, values) {
  await init();
  const res = await client.query(`SELECT (q.v)::bytea AS b FROM (${query}) AS q(v)`, values);
  if (!res.rows.length || res.rows[0].b === null) throw new Error('the query returned no filter');
  return readFilter(res.rows[0].b);
}

module.exports = {
  init, loadValue, readFilter, GuardCopy, BloomFilter, ScalableFilter, CuckooFilter,
  FormatError, KeyKindError, FORMAT_VERSIONS, canonicalBytes, probeForms, numericText,
};
