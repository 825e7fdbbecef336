/*
 * bf_worker.h
 *		The shared tier's background workers: the launcher (bf_launcher.c)
 *		and the workers it starts, which load a database's definitions or
 *		build one filter (bf_build.c).
 */
#ifndef BF_WORKER_H
#define BF_WORKER_H

#include "bf_slot.h"

#define BF_WORKER_LOAD		1	/* request a build of every definition of a database */
#define BF_WORKER_BUILD		2	/* build one slot's filter */

/* bgw_extra of a worker */
typedef struct BfWorkerArgs
{
	int32		mode;
	int32		slot;			/* BUILD: the slot */
} BfWorkerArgs;

extern void bf_register_launcher(void);

/* Count a failed build: backoff and the error to show; slot lock held. */
extern void bf_slot_record_failure(BfSlot *s, const char *error);

#endif							/* BF_WORKER_H */
