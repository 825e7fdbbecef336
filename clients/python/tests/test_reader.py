"""Tests of bloomfilter_client.reader without a server: the golden vectors
(its --selftest, which test/pgtap/golden.sql pins too) and properties over
random keys.  python3 -m unittest discover -s tests
"""

import os
import random
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bloomfilter_client import reader as r  # noqa: E402


def counting(capacity=1000):
    # bloom_empty(1000, 0.01, 'counting'): m = 44544 bits, k = 6
    return r.BloomFilter(r.LAYOUT_COUNTING, 44544, 6, capacity, 0.01)


def random_text(rnd):
    kind = rnd.randrange(3)
    base = '%x' % rnd.getrandbits(40)
    if kind == 0:
        return base + ' ' * rnd.randrange(1, 4)        # trailing blanks
    if kind == 1:
        return base + 'é' * rnd.randrange(25, 40)      # clipped at 63 bytes
    return base


class ReaderTest(unittest.TestCase):

    def test_selftest(self):
        # in the project, the cross-checks with test/pgtap/*.sql run too
        self.assertIsNotNone(r._golden_sql(), 'test/pgtap/golden.sql found')
        self.assertIsNotNone(r._golden_sql('counting.sql'))
        self.assertEqual(r.selftest(), 0)

    def test_add_remove_inverse(self):
        rnd = random.Random(2026)
        for _ in range(20):
            f = counting()
            empty = bytes(f.bits)
            keys = [random_text(rnd) for _ in range(rnd.randrange(1, 60))]
            keys += keys[:len(keys) // 3]                       # some twice
            for k in keys:
                f.add(k)
            self.assertTrue(all(f.contains(k) for k in keys))
            rnd.shuffle(keys)
            for i, k in enumerate(keys):
                f.remove(k)
                self.assertTrue(all(f.contains(x) for x in keys[i + 1:]), 'no false negative')
            self.assertEqual(bytes(f.bits), empty, 'every counter back to zero')
            self.assertEqual(f.added, 0)
            with self.assertRaises(ValueError):
                f.remove(keys[0])

    def test_versions(self):
        f = counting().add('a')
        data = bytearray(f.to_bytes())
        data[4] = 1
        v1 = r.read_filter(bytes(data))
        self.assertEqual(v1.version, 1)
        self.assertEqual(v1.to_bytes(), bytes(data))
        self.assertEqual(v1.add('b').version, 2)
        data[4] = 3
        with self.assertRaisesRegex(r.FormatError, 'unrecognized format version 3'):
            r.read_filter(bytes(data))


if __name__ == '__main__':
    unittest.main()
