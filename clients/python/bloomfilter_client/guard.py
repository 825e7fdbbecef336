"""bloomfilter_client.guard -- a guard index's filter kept in the application.

A GuardCopy loads the filter of a guard index (``CREATE INDEX ... USING
bloomguard``) once, answers "definitely not" / "maybe" for keys in process,
and stays current by fetching only the parts of the filter that changed
(``bloom_guard_changes``: the headers and the changed 256-byte units, or
the whole filter when the server cannot tell what changed).

Staleness, exactly: a "no" is exact for every row committed before the
fetch that returned the copy's version began (the guard sets a row's key
before the row commits).  Rows committed later may be missing until the
next refresh.  So the pattern for "is this username taken?" is: check the
copy; on "no" insert and let the unique constraint arbitrate (catch
unique_violation, SQLSTATE 23505); on "maybe" ask the database.

Works with any DB-API connection whose paramstyle is "format" (psycopg2,
psycopg 3).  Give it a connection of its own in autocommit mode: a fetch
locks the guard and its table AccessShareLock to the end of the
transaction, as a query does.
"""

import struct

from . import reader as _r

__all__ = ['GuardCopy']

_U32 = 0xFFFFFFFF
_MUL = 0x9E3779B1
_HDR = 64


class GuardCopy:
    """The filter of one guard index (a leaf index, not a partitioned one),
    as of ``version``."""

    def __init__(self, conn, guard):
        self._conn = conn
        self.guard = guard
        self.version = None
        self.key_kind = _r.KEY_NONE
        self._buf = bytearray()
        self._layers = []       # (first byte of the layer's bits, blocks, k)
        self.refresh()

    # -- fetching ------------------------------------------------------------
    def refresh(self):
        """Bring the copy up to date; returns the bytes received."""
        with self._conn.cursor() as cur:
            cur.execute('SELECT version, whole, byte_offset, bytes '
                        'FROM bloom_guard_changes(%s::regclass, %s)',
                        (self.guard, self.version))
            rows = cur.fetchall()
        received = 0
        version = None
        whole = None
        for version, is_whole, offset, data in rows:
            data = bytes(data)
            received += len(data)
            if is_whole:
                whole = data
            else:
                self._patch(offset, data)
        if whole is not None:
            self._load(whole)
        elif rows:
            self._read_headers()
        self.version = version
        return received

    def _patch(self, offset, data):
        if offset < 0 or offset + len(data) > len(self._buf):
            raise _r.FormatError('a change at byte %d (%d bytes) is outside the copy of %d bytes'
                                 % (offset, len(data), len(self._buf)))
        self._buf[offset:offset + len(data)] = data

    def _load(self, data):
        f = _r.read_filter(data)        # validates every header and length
        if not isinstance(f, _r.ScalableFilter) or f.layout != _r.LAYOUT_BLOCKED:
            raise _r.FormatError('a guard\'s filter is a scalable blocked filter')
        self._buf = bytearray(data)
        self._read_headers()

    def _read_headers(self):
        buf = self._buf
        self.key_kind = buf[7]
        nlayers = struct.unpack_from('<I', buf, 12)[0]
        self.added = struct.unpack_from('<Q', buf, 40)[0]
        layers = []
        off = _HDR
        for _ in range(nlayers):
            k = struct.unpack_from('<H', buf, off + 8)[0]
            nbits = struct.unpack_from('<Q', buf, off + 16)[0]
            layers.append((off + _HDR, nbits // 512, k))
            off += _HDR + nbits // 8
        if off != len(buf):
            raise _r.FormatError('the copy\'s headers describe %d bytes, not %d' % (off, len(buf)))
        self._layers = layers

    # -- checks --------------------------------------------------------------
    def might_contain(self, key, sqltype=None):
        """False: no row committed before the copy's version holds the key
        (definitely not); True: maybe.  A key of another key kind than the
        guard's column raises KeyKindError; None (NULL) gives None."""
        if key is None:
            return None
        kind, forms = _r.probe_bytes(key, sqltype)
        if self.key_kind != _r.KEY_NONE and kind != self.key_kind:
            raise _r.KeyKindError('key of key kind %s does not match the guard\'s key kind %s'
                                  % (_r.KEY_KIND_NAMES[kind], _r.KEY_KIND_NAMES[self.key_kind]))
        buf = self._buf
        for canon in forms:
            h = _r.xxh3_64(canon)
            hi = h >> 32
            s0 = (h & _U32) | 1
            for base, nblocks, k in self._layers:
                first = base + (((hi * nblocks) >> 32) << 6)
                s = s0
                for _ in range(k):
                    s = (s * _MUL) & _U32
                    p = s >> 23
                    if not (buf[first + (p >> 3)] >> (p & 7)) & 1:
                        break
                else:
                    return True
        return False

    __contains__ = might_contain

    @property
    def nbytes(self):
        """Bytes the copy holds (the filter's value)."""
        return len(self._buf)

    def to_bytes(self):
        """The copy as the bytes of a bloomfilter value."""
        return bytes(self._buf)
