-- bloomfilter 1.0 -> 1.1
\echo Use "ALTER EXTENSION bloomfilter UPDATE TO '1.1'" to load this file. \quit


--
-- The backend-local cache of stored filters (src/bf_cache.c).
--
CREATE FUNCTION bloom_cache_stats(OUT entries bigint, OUT bytes bigint,
								  OUT pinned bigint, OUT reads bigint,
								  OUT shared_hits bigint)
	AS 'MODULE_PATHNAME', 'bloom_cache_stats'
	LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION bloom_cache_stats() IS
	'this backend''s cache of stored filters: entries and their bytes now, entries in use by a call site, and since the backend started the stored filters read whole into it and the times a call site found one another had read';
