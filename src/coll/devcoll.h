/*
 * Collectives on device memory: which route a call takes when a device
 * runtime is loaded, and the device and staged routes themselves (the host
 * route is coll_host.c). pd_coll_run is the one caller.
 */
#ifndef PD_COLL_DEVCOLL_H
#define PD_COLL_DEVCOLL_H

#include "coll/coll.h"
#include "route/route.h"

/* comm's device-CCL context, created on first use (collective: every
 * member calls it at the same point; coll/device_comm.c). */
int pd_comm_device(struct ompi_communicator_t *comm,
                   struct pd_dccl_comm **out, struct pd_fail *fail);

/* Host, device, staged, or refused (why says why) for c's buffers. */
enum pd_route pd_devcoll_route(const struct pd_coll *c, char *why,
                                 size_t whylen);

/* c on the device CCL: whole calls, or composed of its send/receive. */
int pd_devcoll_run(const struct pd_coll *c, struct pd_fail *fail);

/* c's device buffers copied to host memory, the host path run on the
 * copies, results copied back. */
int pd_devcoll_staged(const struct pd_coll *c, struct pd_fail *fail);

#endif
