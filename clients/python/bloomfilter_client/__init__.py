"""bloomfilter_client -- the bloomfilter extension's filters, checked in the
application.

- GuardCopy: a guard index's filter, loaded once and kept current with the
  pages that changed (bloom_guard_changes);
- read_filter / CuckooFilter: any stored bloomfilter or cuckoofilter value,
  from the bytes of ``value::bytea``;
- load_value: such a value from a query.

Every check answers as the server's ``@>`` does, from the same canonical
key bytes: False is "definitely not", True "maybe".
"""

from .guard import GuardCopy
from .reader import (BloomFilter, CuckooFilter, FormatError, KeyKindError,
                     ScalableFilter, read_filter, FORMAT_VERSION, FORMAT_VERSIONS)

__all__ = ['GuardCopy', 'BloomFilter', 'ScalableFilter', 'CuckooFilter', 'read_filter',
           'load_value', 'FormatError', 'KeyKindError', 'FORMAT_VERSION', 'FORMAT_VERSIONS']
__version__ = '2.0.0'


def load_value(conn, query, params=None):
    """The filter the query's first column returns (a bloomfilter or
    cuckoofilter value, or its bytea cast), e.g.
    ``load_value(conn, "SELECT bf FROM filters WHERE name = %s", ('users',))``."""
    with conn.cursor() as cur:
        cur.execute('SELECT (q.v)::bytea FROM (' + query + ') AS q(v)', params)
        row = cur.fetchone()
    if row is None or row[0] is None:
        raise LookupError('the query returned no filter')
    data = bytes(row[0])
    if len(data) > 5 and data[5] == 3:
        return CuckooFilter.from_bytes(data)
    return read_filter(data)
