/*
 * bf_core.h
 *		The PostgreSQL-free core: the one header the other folders include.
 *
 * The core's files, each calling only those before it:
 *
 *	bf_format	the byte format: headers, names, validation of a whole value
 *				(a scalable one's layers included), bf_format_double
 *	bf_hash		key hashing (XXH3; header only)
 *	bf_counting	the counting layout's 4-bit counters
 *	bf_sizing	predicted rates, and (bits, hashes) for a capacity and rate
 *	bf_layout	the bit layouts of one array: adds, checks, estimates
 *	bf_scalable	scalable filters' layers, and the checks and estimates of a
 *				value of any family
 *	bf_text		the text form, and base64
 *	bf_cuckoo	the cuckoofilter type, its text form in bf_cuckoo_text.c
 *
 * Free of PostgreSQL: no header here includes one of its headers, so that
 * fuzzers, unit tests and client readers compile the core without a server.
 */
#ifndef BF_CORE_H
#define BF_CORE_H

/* in the order of the files */
#include "core/bf_format.h"
#include "core/bf_hash.h"
#include "core/bf_counting.h"
#include "core/bf_sizing.h"
#include "core/bf_layout.h"
#include "core/bf_scalable.h"
#include "core/bf_text.h"
#include "core/bf_cuckoo.h"

#endif							/* BF_CORE_H */
