/*
 * Argument checks shared by the MPI entry points. Each returns
 * MPI_SUCCESS or the error class after raising the error through the
 * communicator's handler, so an entry point reads as a list of checks:
 *
 *     PD_CHECK(pd_check_active(call));
 *     PD_CHECK(pd_check_comm(comm, call));
 */
#ifndef PD_API_API_H
#define PD_API_API_H

#include <stdbool.h>

#include "service/call_check.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "core/error.h"
#include "core/objects.h"
#include "core/runtime.h"
#include "core/stats.h"
#include "core/type_stage.h"

#define PD_CHECK(expr)                       \
    do {                                     \
        int pd_check_rc_ = (expr);           \
        if (pd_check_rc_ != MPI_SUCCESS)     \
            return pd_check_rc_;             \
    } while (0)

int pd_check_active(const char *call);

/* A collective's buffer as the descriptor holds it. In core NULL means no
 * buffer, or for a send buffer in place, so MPI_BOTTOM (NULL) is
 * PD_BOTTOM there: api/stage.c packs its data from absolute addresses
 * (checks let MPI_BOTTOM through with count > 0 only where the type is
 * not contiguous, so core never reads at PD_BOTTOM). */
extern const char pd_bottom;
#define PD_BOTTOM ((void *)&pd_bottom)
static inline void *pd_coll_buf(const void *buf)
{
    return buf == MPI_BOTTOM ? PD_BOTTOM : (void *)buf;
}
/* A send buffer: MPI_IN_PLACE as NULL. */
static inline const void *pd_coll_sendbuf(const void *buf)
{
    return buf == MPI_IN_PLACE ? NULL : pd_coll_buf(buf);
}
/* What every rank of a collective must pass alike, checked under
 * PDMPI_CHECK=1 (service/call_check.h): the datatype (NULL: may differ) and the
 * bytes (PD_CALL_ANY_BYTES: may differ); and the bytes PDMPI_STATS counts
 * for this rank. */
struct pd_agree {
    MPI_Datatype type;
    size_t bytes;
    size_t stat_bytes;
    /* The datatypes of a move's send and receive buffers (a reduction's
     * is c->type): where not contiguous, the call runs on packed copies
     * (api/stage.c); stage: copies made by the caller, handed over. */
    MPI_Datatype send_type, recv_type;
    struct pd_type_stage *stage;
};
/* Run collective c for call (api/coll_call.c): entered, tagged, timed,
 * run now -- or, with request, queued and *request its handle -- and a
 * failure raised. */
int pd_api_coll(const char *call, struct pd_coll *c, const struct pd_agree *a,
                MPI_Request *request);
/* A barrier on comm (usable; intra or inter) for call (api/barrier.c). */
int pd_api_barrier(const char *call, MPI_Comm comm);
int pd_check_comm(MPI_Comm comm, const char *call);
/* comm (the argument named what) is an intracommunicator: the calls
 * pdmpi provides on intracommunicators alone check it. */
int pd_check_intra(MPI_Comm comm, const char *call, const char *what);
/* comm's name for messages: its own, or "the communicator". */
const char *pd_comm_label(MPI_Comm comm);
/* The ranks of comm with color as a new communicator (MPI_Comm_split,
 * ranks in key order) carrying a topology, cart or graph, which it takes
 * (NULL both: out of memory); the others get MPI_COMM_NULL
 * (api/topo.c). */
struct pd_cart;
struct pd_graph;
int pd_topo_comm(const char *call, MPI_Comm comm, int color, int key,
                 struct pd_cart *cart, struct pd_graph *graph, MPI_Comm *out);
int pd_check_count(MPI_Comm comm, const char *call, int count,
                   const char *what);
/* A valid datatype handle (queries accept any). */
int pd_check_type(MPI_Comm comm, const char *call, MPI_Datatype type,
                  const char *what);
/* A datatype that can describe a buffer in communication: valid and
 * committed. */
int pd_check_data_type(MPI_Comm comm, const char *call, MPI_Datatype type,
                       const char *what);
/* counts[0..n) non-negative (and the array itself present). */
int pd_check_counts(MPI_Comm comm, const char *call, const int *counts,
                    int n, const char *what);
int pd_check_displs(MPI_Comm comm, const char *call, const int *displs,
                    const char *what);
/* buf must be non-NULL when count > 0, unless it is MPI_BOTTOM (NULL)
 * with a type that is not contiguous, whose displacements are then
 * addresses (MPI_Get_address); MPI_IN_PLACE is not a buffer; count items
 * of type (checked before) must fit the address space. */
int pd_check_buffer(MPI_Comm comm, const char *call, const void *buf,
                    int count, MPI_Datatype type, const char *what);
int pd_check_root(MPI_Comm comm, const char *call, int root);
/* op must be a valid op defined on type. */
int pd_check_op(MPI_Comm comm, const char *call, MPI_Datatype type, MPI_Op op);
/* A request handle's slot (MPI_REQUEST_NULL is fine). */
int pd_check_request(MPI_Comm comm, const char *call, MPI_Request req);
/* A valid info handle (MPI_INFO_NULL included). */
bool pd_info_is_valid(MPI_Info info);
/* *request is a valid handle and not MPI_REQUEST_NULL (request not NULL). */
int pd_check_live_request(const char *call, const MPI_Request *request);
/* A rank of comm to talk to (MPI_PROC_NULL too; MPI_ANY_SOURCE where
 * any_ok); what names the argument. */
int pd_check_peer(MPI_Comm comm, const char *call, int rank, bool any_ok,
                  const char *what);
/* A tag: not negative (MPI_ANY_TAG where any_ok). */
int pd_check_tag(MPI_Comm comm, const char *call, int tag, bool any_ok);
/* Every argument of a send but the request. */
int pd_check_send(MPI_Comm comm, const char *call, const void *buf, int count,
                  MPI_Datatype type, int dest, int tag);
/* Every argument of a receive but the request. */
int pd_check_recv(MPI_Comm comm, const char *call, void *buf, int count,
                  MPI_Datatype type, int source, int tag);
/* The request argument of a nonblocking call: not NULL. */
int pd_check_request_out(MPI_Comm comm, const char *call,
                         MPI_Request *request);
/* The starts of point-to-point calls the entry points share, arguments
 * checked before (api/p2p.c, api/bsend.c): a send (request NULL:
 * blocking), a receive (MPI_PROC_NULL: born complete), a buffered send
 * (its own checks included). */
int pd_api_send(const char *call, const void *buf, int count,
                MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                MPI_Request *request);
int pd_api_irecv(const char *call, void *buf, int count, MPI_Datatype type,
                 int source, int tag, MPI_Comm comm, MPI_Request *request);
int pd_api_ssend(const char *call, const void *buf, int count,
                 MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                 MPI_Request *request);
/* Where point-to-point with peer on comm runs: comm, or for an
 * intercommunicator its private union, where *peer (a rank of the
 * remote group, or a wildcard) becomes the peer's rank; *shift (may be
 * NULL) is what a status's source there loses to be the remote rank. */
MPI_Comm pd_p2p_on(MPI_Comm comm, int *peer, int *shift);
int pd_api_bsend(const char *call, const void *buf, int count,
                 MPI_Datatype type, int dest, int tag, MPI_Comm comm);
/* Pack c's buffers of non-contiguous datatypes into scratch copies that
 * c then uses; *stage (NULL: none) unpacks what c received and goes with
 * the call (api/stage.c). */
int pd_stage_coll(const char *call, struct pd_coll *c,
                  const struct pd_agree *a, struct pd_type_stage **stage);
/* The same for count items of type at buf of a send (packed now) or a
 * receive (unpacked when it finishes). */
int pd_stage_p2p(const char *call, MPI_Comm comm, const void *buf, int count,
                 MPI_Datatype type, bool receive, struct pd_type_stage **stage);
/* A send's stage with no scratch buffer, for a send packed piece by
 * piece as it moves (pd_stage_pack_piece). */
int pd_stage_p2p_unpacked(const char *call, MPI_Comm comm, const void *buf,
                          int count, MPI_Datatype type,
                          struct pd_type_stage **stage);
/* Free the error handlers the program made, and forget the error codes
 * it added (MPI_Finalize). */
void pd_errhandlers_free_all(void);
/* Free the types MPI_Type_create_f90_* made (MPI_Finalize). */
void pd_f90_types_free_all(void);
/* Raise the error a failed core call reported. */
int pd_raise_fail(MPI_Comm comm, const char *call, const struct pd_fail *fail);

#endif
