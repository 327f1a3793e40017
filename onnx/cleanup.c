/* cleanup.c — the files being written that om_save_cleanup removes (a host's signal handler
 * calls it): a fixed table of slots walked with lock-free atomics and unlink, both
 * async-signal-safe. The library's one table of mutable global state: a signal handler has
 * no other way to find what the interrupted calls were writing (include/omopt.h). */
#include <stdatomic.h>
#include <unistd.h>

#include "files.h"

_Static_assert(ATOMIC_INT_LOCK_FREE == 2 && ATOMIC_POINTER_LOCK_FREE == 2,
	       "om_save_cleanup needs lock-free atomics to be async-signal-safe");

/* A slot's life: FREE -> SETTING (its owner stores the path) -> LIVE -> FREE (om_cleanup_drop)
 * or -> HELD (om_cleanup_hold: its owner is committing it, cleanup leaves it) -> LIVE / FREE;
 * om_save_cleanup takes LIVE -> REMOVING -> REMOVED, which only the owner frees. */
enum { FREE, SETTING, LIVE, HELD, REMOVING, REMOVED };

enum { SLOTS = 64 }; /* files written at once in one process (two per model save) */

static struct {
	atomic_int state;
	_Atomic(const char *) path;
} slots[SLOTS];

int om_cleanup_add(const char *path)
{
	for (int i = 0; i < SLOTS; i++) {
		int expect = FREE;
		if (atomic_compare_exchange_strong(&slots[i].state, &expect, SETTING)) {
			atomic_store(&slots[i].path, path);
			atomic_store(&slots[i].state, LIVE);
			return i;
		}
	}
	return -1;
}

/* Moves slot from LIVE to `to`; waits while om_save_cleanup is removing its file (in another
 * thread: on this one it has returned before we run again). false: the file was removed. */
static bool leave_live(int slot, int to)
{
	for (;;) {
		int expect = LIVE;
		if (atomic_compare_exchange_strong(&slots[slot].state, &expect, to))
			return true;
		if (expect == REMOVED)
			return false;
		/* REMOVING: a handler is on it; HELD: not ours to change (a bug) */
		if (expect == HELD)
			return true;
	}
}

bool om_cleanup_hold(int slot)
{
	return slot < 0 || leave_live(slot, HELD);
}

void om_cleanup_release(int slot)
{
	if (slot >= 0)
		atomic_store(&slots[slot].state, LIVE);
}

void om_cleanup_drop(int slot)
{
	if (slot < 0)
		return;
	int expect = HELD;
	if (!atomic_compare_exchange_strong(&slots[slot].state, &expect, FREE))
		leave_live(slot, FREE);
	atomic_store(&slots[slot].state, FREE);
}

int om_save_cleanup(void)
{
	int n = 0;
	for (int i = 0; i < SLOTS; i++) {
		int expect = LIVE;
		if (!atomic_compare_exchange_strong(&slots[i].state, &expect, REMOVING))
			continue;
		n += unlink(atomic_load(&slots[i].path)) == 0;
		atomic_store(&slots[i].state, REMOVED);
	}
	return n;
}
