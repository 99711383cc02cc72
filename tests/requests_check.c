/*
 * requests_check.c - MPI_Waitsome, MPI_Testsome and MPI_Alloc_mem /
 * MPI_Free_mem: every rank sends one message to every rank (itself too)
 * in memory from MPI_Alloc_mem, completes the receives with
 * MPI_Testsome/MPI_Waitsome, and checks each payload against a formula.
 * Generalized requests: the completion calls wait for
 * MPI_Grequest_complete, the status is the query callback's, the free
 * callback runs once (at MPI_Wait, or at MPI_Grequest_complete for a
 * request freed before), MPI_Cancel calls the cancel callback.
 * TAP-ish output from rank 0; exit status 1 on any failure.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

static int rank, size, checks, failed;

static void report(int bad, const char *what)
{
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    checks++;
    if (any)
        failed++;
    if (rank == 0)
        printf("%s %d - %s\n", any ? "not ok" : "ok", checks, what);
}

static int payload(int src, int dst, int i)
{
    return src * 100000 + dst * 100 + i;
}

/* Send N ints to every rank, receive from every rank, completing the
 * receives with Testsome (polling) or Waitsome. */
static int exchange(int use_testsome)
{
    enum { N = 64 };
    int *out = NULL, *in = NULL, bad = 0;
    MPI_Alloc_mem((MPI_Aint)(sizeof(int) * N * size), MPI_INFO_NULL, &out);
    MPI_Alloc_mem((MPI_Aint)(sizeof(int) * N * size), MPI_INFO_NULL, &in);
    MPI_Request *recvs = malloc(sizeof(MPI_Request) * size);
    MPI_Request *sends = malloc(sizeof(MPI_Request) * size);
    int *indices = malloc(sizeof(int) * size);
    MPI_Status *statuses = malloc(sizeof(MPI_Status) * size);
    for (int r = 0; r < size; r++)
        MPI_Irecv(in + r * N, N, MPI_INT, r, 5, MPI_COMM_WORLD, &recvs[r]);
    for (int r = 0; r < size; r++) {
        for (int i = 0; i < N; i++)
            out[r * N + i] = payload(rank, r, i);
        MPI_Isend(out + r * N, N, MPI_INT, r, 5, MPI_COMM_WORLD, &sends[r]);
    }
    int done = 0;
    while (done < size) {
        int outcount = 0;
        if (use_testsome)
            MPI_Testsome(size, recvs, &outcount, indices, statuses);
        else
            MPI_Waitsome(size, recvs, &outcount, indices, statuses);
        if (outcount == MPI_UNDEFINED) {
            bad = 1;
            break;
        }
        for (int k = 0; k < outcount; k++) {
            int src = indices[k];
            if (statuses[k].MPI_SOURCE != src || recvs[src] != MPI_REQUEST_NULL)
                bad = 1;
            for (int i = 0; i < N; i++)
                if (in[src * N + i] != payload(src, rank, i))
                    bad = 1;
        }
        done += outcount;
    }
    int outcount = 0;
    MPI_Waitsome(size, recvs, &outcount, indices, MPI_STATUSES_IGNORE);
    if (outcount != MPI_UNDEFINED)
        bad = 1;        /* nothing active is left */
    MPI_Waitall(size, sends, MPI_STATUSES_IGNORE);
    MPI_Free_mem(out);
    MPI_Free_mem(in);
    free(recvs);
    free(sends);
    free(indices);
    free(statuses);
    return bad;
}

struct greq_log {
    int queries, frees, cancels, cancel_complete;
};

static int greq_query(void *extra, MPI_Status *status)
{
    struct greq_log *log = extra;
    log->queries++;
    status->MPI_SOURCE = 77;
    status->MPI_TAG = 78;
    status->MPI_ERROR = MPI_SUCCESS;
    return MPI_SUCCESS;
}

static int greq_free(void *extra)
{
    ((struct greq_log *)extra)->frees++;
    return MPI_SUCCESS;
}

static int greq_cancel(void *extra, int complete)
{
    struct greq_log *log = extra;
    log->cancels++;
    log->cancel_complete = complete;
    return MPI_SUCCESS;
}

/* Returns the number of things that went wrong. */
static int generalized(void)
{
    int bad = 0, flag = -1;
    struct greq_log log = { 0, 0, 0, -1 };
    MPI_Request req;
    MPI_Status st;
    bad += MPI_Grequest_start(greq_query, greq_free, greq_cancel, &log,
                              &req) != MPI_SUCCESS;
    bad += MPI_Test(&req, &flag, &st) != MPI_SUCCESS || flag != 0;
    bad += MPI_Cancel(&req) != MPI_SUCCESS || log.cancels != 1 ||
           log.cancel_complete != 0;
    bad += MPI_Grequest_complete(req) != MPI_SUCCESS;
    bad += MPI_Request_get_status(req, &flag, &st) != MPI_SUCCESS ||
           flag != 1 || st.MPI_SOURCE != 77;
    bad += MPI_Wait(&req, &st) != MPI_SUCCESS;
    bad += req != MPI_REQUEST_NULL || st.MPI_SOURCE != 77 ||
           st.MPI_TAG != 78 || log.frees != 1;
    /* Freed before it completes: the free callback waits for that. */
    struct greq_log early = { 0, 0, 0, -1 };
    bad += MPI_Grequest_start(greq_query, greq_free, greq_cancel, &early,
                              &req) != MPI_SUCCESS;
    MPI_Request keep = req;
    bad += MPI_Request_free(&req) != MPI_SUCCESS || early.frees != 0;
    bad += MPI_Grequest_complete(keep) != MPI_SUCCESS || early.frees != 1;
    return bad;
}

/* What a status says (MPI 3.2.5, 3.7.3): a receive's source, tag and
 * count from MPI_Request_get_status before the request is finished; the
 * MPI_ERROR field left as the caller set it by every call that
 * completes one request or probes (MPI_Recv, MPI_Wait, MPI_Test,
 * MPI_Probe, MPI_Mprobe, MPI_Mrecv, MPI_PROC_NULL's status too), and
 * set by MPI_Waitall. Each rank receives from its left neighbour.
 * Returns the number of things that went wrong. */
static int status_fields(void)
{
    int bad = 0, flag = 0, count = -1;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[3] = { rank, 2 * rank, 3 * rank }, in[3];
    MPI_Request sreq, rreq;
    MPI_Status st;
    for (int round = 0; round < 5; round++) {
        MPI_Isend(out, 3, MPI_INT, right, 40 + round, MPI_COMM_WORLD, &sreq);
        st.MPI_ERROR = MPI_ERR_DIMS;
        st.MPI_SOURCE = st.MPI_TAG = -7;
        switch (round) {
        case 0:     /* MPI_Irecv, MPI_Request_get_status, MPI_Wait */
            MPI_Irecv(in, 3, MPI_INT, left, 40, MPI_COMM_WORLD, &rreq);
            do
                MPI_Request_get_status(rreq, &flag, &st);
            while (!flag);
            MPI_Get_count(&st, MPI_INT, &count);
            bad += st.MPI_SOURCE != left || st.MPI_TAG != 40 || count != 3 ||
                   st.MPI_ERROR != MPI_ERR_DIMS || rreq == MPI_REQUEST_NULL;
            st.MPI_ERROR = MPI_ERR_TOPOLOGY;
            MPI_Wait(&rreq, &st);
            bad += st.MPI_ERROR != MPI_ERR_TOPOLOGY || st.MPI_TAG != 40;
            break;
        case 1:     /* MPI_Recv */
            MPI_Recv(in, 3, MPI_INT, left, 41, MPI_COMM_WORLD, &st);
            bad += st.MPI_ERROR != MPI_ERR_DIMS || st.MPI_SOURCE != left;
            break;
        case 2:     /* MPI_Probe, then MPI_Irecv and MPI_Test */
            MPI_Probe(left, 42, MPI_COMM_WORLD, &st);
            bad += st.MPI_ERROR != MPI_ERR_DIMS || st.MPI_TAG != 42;
            MPI_Irecv(in, 3, MPI_INT, left, 42, MPI_COMM_WORLD, &rreq);
            st.MPI_ERROR = MPI_ERR_TOPOLOGY;
            do
                MPI_Test(&rreq, &flag, &st);
            while (!flag);
            bad += st.MPI_ERROR != MPI_ERR_TOPOLOGY || st.MPI_SOURCE != left;
            break;
        case 3: {   /* MPI_Mprobe and MPI_Mrecv */
            MPI_Message msg;
            MPI_Mprobe(left, 43, MPI_COMM_WORLD, &msg, &st);
            bad += st.MPI_ERROR != MPI_ERR_DIMS || st.MPI_TAG != 43;
            st.MPI_ERROR = MPI_ERR_TOPOLOGY;
            MPI_Mrecv(in, 3, MPI_INT, &msg, &st);
            bad += st.MPI_ERROR != MPI_ERR_TOPOLOGY || st.MPI_TAG != 43;
            break;
        }
        default: {  /* MPI_Waitall sets it; MPI_PROC_NULL leaves it */
            MPI_Status two[2];
            MPI_Request r[2];
            MPI_Irecv(in, 3, MPI_INT, left, 44, MPI_COMM_WORLD, &r[0]);
            MPI_Irecv(NULL, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD,
                      &r[1]);
            two[0].MPI_ERROR = two[1].MPI_ERROR = MPI_ERR_DIMS;
            MPI_Waitall(2, r, two);
            bad += two[0].MPI_ERROR != MPI_SUCCESS ||
                   two[1].MPI_ERROR != MPI_SUCCESS ||
                   two[1].MPI_SOURCE != MPI_PROC_NULL;
            MPI_Recv(NULL, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
            bad += st.MPI_ERROR != MPI_ERR_DIMS ||
                   st.MPI_SOURCE != MPI_PROC_NULL || st.MPI_TAG != MPI_ANY_TAG;
            break;
        }
        }
        bad += in[0] != left || in[1] != 2 * left || in[2] != 3 * left;
        MPI_Wait(&sreq, MPI_STATUS_IGNORE);
    }
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0)
        printf("# requests_check on %d rank(s)\n", size);
    report(exchange(1), "MPI_Testsome completes every receive with its payload");
    report(exchange(0), "MPI_Waitsome completes every receive with its payload");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    void *p = NULL;
    int rc = MPI_Alloc_mem(-1, MPI_INFO_NULL, &p);
    report(rc == MPI_SUCCESS, "MPI_Alloc_mem of a negative size fails");
    report(status_fields(), "statuses: MPI_Request_get_status gives a "
           "receive's source, tag and count; MPI_ERROR is the caller's but "
           "in MPI_Waitall");
    report(generalized(), "generalized requests: MPI_Grequest_complete "
           "completes them, the status is the query callback's, free and "
           "cancel callbacks run once");
    if (rank == 0)
        printf("1..%d\n", checks);
    MPI_Finalize();
    return failed != 0;
}
