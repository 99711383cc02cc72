/*
 * Ranks agree on the call before a host-backend step (coll/agree.c).
 *
 * gloo's transport aborts the whole process when a message is longer
 * than the receive posted for it, on a thread no caller can catch, so a
 * rank that passes another count than its peers must be found before the
 * step moves anything. A backend that needs this sets its agree entry;
 * then every step and exchange first trades one fixed-size record per
 * rank, and the ranks fail together, naming both calls, when any differ.
 *
 * A small broadcast's agreement is one-way where the backend can
 * (agree_rooted): the root sends its record and data and returns, as a
 * broadcast's root may in MPI; each other rank sends its record back and
 * compares the root's with its own. The root checks those answers later,
 * before it next reads from that rank (or after PD_AGREE_OWED_MAX
 * broadcasts), so a rank that was in another call is still named, then;
 * it takes any still owed before it lets go of the communicator.
 */
#ifndef PD_COLL_AGREE_H
#define PD_COLL_AGREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "base/call_sig.h"
#include "base/fail.h"

struct ompi_communicator_t;

/* One rank's record: the collective call (to name it) and the backend
 * step's own shape (what the transport needs to match). */
struct pd_agree_rec {
    struct pd_call_sig call;
    uint8_t step;                   /* enum pd_coll_kind of the step */
    uint8_t unused[3];
    int32_t root;
    uint64_t bytes;                 /* the step's elements x element size */
};

/* The backend context a step runs on: its ops, its state, its size, and
 * the communicator rank of each of its ranks (NULL: the same numbers). */
struct pd_agree_ctx {
    struct ompi_communicator_t *comm;
    const struct pd_backend_ops *ops;
    struct pd_backend_comm *bc;
    int size;
    const int *comm_rank_of;
    int rank;                       /* this rank among the size */
    /* The answers this rank is owed as a broadcast's root, kept with bc
     * (made on first use; pd_agree_owed_release); NULL: no one-way
     * agreements on this context. */
    struct pd_agree_owed **owed;
};

/* Broadcasts a root may lead before it takes the answers to the oldest. */
#define PD_AGREE_OWED_MAX 16

/* Before the context's backend goes: every answer still owed taken (a
 * root may leave a communicator right after its broadcasts, and closing
 * a connection with answers unread would reset it under the ranks still
 * taking the root's data), then *owed freed. Each wait is bounded by the
 * backend's timeout; a failure ends the taking, as the context goes. */
void pd_agree_owed_release(struct pd_agree_owed **owed,
                           const struct pd_backend_ops *ops,
                           struct pd_backend_comm *bc, int rank, int size);

/* MPI_SUCCESS when every rank passed a record equal to mine (or the
 * backend needs no agreement); else the error class, both calls in fail. */
int pd_coll_agree(const struct pd_agree_ctx *x, uint32_t tag,
                  const struct pd_agree_rec *mine, const char *what,
                  struct pd_fail *fail);

/* Data a record may carry (pd_coll_agree_carrying): at most this much
 * per rank, and at most PD_AGREE_CARRY_TOTAL sent by one rank to all its
 * peers together. Within these bounds the sends of an agreement fit the
 * transport's socket buffers, so every rank sends all before it reads. */
#define PD_AGREE_CARRY_MAX (64 * 1024)
#define PD_AGREE_CARRY_TOTAL (256 * 1024)

/* Whether a call of bytes per rank on size ranks may ride in the
 * agreement (one exchange instead of the agreement and the backend's
 * own rounds). */
static inline bool pd_agree_can_carry(int size, size_t bytes)
{
    return size > 1 && bytes <= PD_AGREE_CARRY_MAX &&
           bytes * (size_t)(size - 1) <= PD_AGREE_CARRY_TOTAL;
}

/* pd_coll_agree with bytes (pd_agree_can_carry) of data at data after
 * the record (NULL: this rank carries none, the others may): on success
 * rank r's record is at *out + r * *stride and its data right after it,
 * zeros where rank r carried none (free *out). Small calls move their
 * data in the agreement itself. */
int pd_coll_agree_carrying(const struct pd_agree_ctx *x, uint32_t tag,
                           const struct pd_agree_rec *mine, const void *data,
                           size_t bytes, unsigned char **out, size_t *stride,
                           const char *what, struct pd_fail *fail);

/* A small broadcast's agreement (one-way, see above), its data riding
 * along: mine->root's `bytes` (pd_agree_can_carry) at buf land in buf on
 * every rank. Falls back to pd_coll_agree_carrying where the backend or
 * context has no one-way agreement. */
int pd_coll_agree_rooted(const struct pd_agree_ctx *x, uint32_t tag,
                         const struct pd_agree_rec *mine, void *buf,
                         size_t bytes, const char *what,
                         struct pd_fail *fail);

/* A step or exchange on x that failed with a backend's status and error
 * e, as an MPI error class in fail: it names the rank a failed wait was
 * for (e->peer, where the backend can tell) and where that rank runs; a
 * timeout the backend cannot place is placed by asking the ranks through
 * the store which of them still answer (pd_calls_silent_rank). */
int pd_coll_step_failed(const struct pd_agree_ctx *x, uint32_t tag,
                        int status, const char *what,
                        struct pd_backend_error *e, struct pd_fail *fail);

/* After pd_coll_agree of an exchange whose block lengths differ from rank
 * to rank (the v-variants): every rank's lengths to and from every peer,
 * so that all ranks find the same pair that disagrees. */
int pd_coll_agree_blocks(const struct pd_agree_ctx *x, uint32_t tag,
                         const struct pd_p2p_op *msgs, size_t n,
                         const char *what, struct pd_fail *fail);

#endif
