-- bloomfilter 1.0 -> 1.1
\echo Use "ALTER EXTENSION bloomfilter UPDATE TO '1.1'" to load this file. \quit

