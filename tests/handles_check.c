/*
 * handles_check.c - handle conversions (MPI_X_c2f, MPI_X_f2c) and
 * MPI_Status_c2f/f2c.
 *
 * Predefined handles convert to Open MPI's Fortran values (written here
 * from Open MPI 4.1's mpif-handles.h: MPI_COMM_WORLD 0, MPI_INT 39, ...)
 * and back; a created communicator, datatype, group, op, request and
 * message convert to an integer that converts back to the same handle,
 * which still works (an allreduce on a communicator brought back from
 * its integer); once freed, its integer names nothing (the null handle)
 * until another handle takes it -- pdmpi's answer: MPI leaves it open,
 * and Open MPI, under which this program passes too, answers otherwise.
 */
#include <mpi.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "tap_harness.h"

static void check_predefined(void)
{
    struct verdict v = {""};
#define EXPECT(c2f, f2c, handle, value)                                    \
    do {                                                                   \
        if (c2f(handle) != (value))                                        \
            fail(&v, #c2f "(" #handle ") is %d, expected %d",              \
                 (int)c2f(handle), (value));                               \
        if (f2c(value) != (handle))                                        \
            fail(&v, #f2c "(%d) is not " #handle, (value));                \
    } while (0)
    EXPECT(MPI_Comm_c2f, MPI_Comm_f2c, MPI_COMM_WORLD, 0);
    EXPECT(MPI_Comm_c2f, MPI_Comm_f2c, MPI_COMM_SELF, 1);
    EXPECT(MPI_Comm_c2f, MPI_Comm_f2c, MPI_COMM_NULL, 2);
    EXPECT(MPI_Type_c2f, MPI_Type_f2c, MPI_DATATYPE_NULL, 0);
    EXPECT(MPI_Type_c2f, MPI_Type_f2c, MPI_BYTE, 1);
    EXPECT(MPI_Type_c2f, MPI_Type_f2c, MPI_INT, 39);
    EXPECT(MPI_Type_c2f, MPI_Type_f2c, MPI_FLOAT, 45);
    EXPECT(MPI_Type_c2f, MPI_Type_f2c, MPI_DOUBLE, 46);
    EXPECT(MPI_Type_c2f, MPI_Type_f2c, MPI_INTEGER, 7);
    EXPECT(MPI_Group_c2f, MPI_Group_f2c, MPI_GROUP_NULL, 0);
    EXPECT(MPI_Group_c2f, MPI_Group_f2c, MPI_GROUP_EMPTY, 1);
    EXPECT(MPI_Op_c2f, MPI_Op_f2c, MPI_OP_NULL, 0);
    EXPECT(MPI_Op_c2f, MPI_Op_f2c, MPI_MAX, 1);
    EXPECT(MPI_Op_c2f, MPI_Op_f2c, MPI_SUM, 3);
    EXPECT(MPI_Op_c2f, MPI_Op_f2c, MPI_NO_OP, 14);
    EXPECT(MPI_Errhandler_c2f, MPI_Errhandler_f2c, MPI_ERRHANDLER_NULL, 0);
    EXPECT(MPI_Errhandler_c2f, MPI_Errhandler_f2c, MPI_ERRORS_ARE_FATAL, 1);
    EXPECT(MPI_Errhandler_c2f, MPI_Errhandler_f2c, MPI_ERRORS_RETURN, 2);
    EXPECT(MPI_Request_c2f, MPI_Request_f2c, MPI_REQUEST_NULL, 0);
    EXPECT(MPI_Info_c2f, MPI_Info_f2c, MPI_INFO_NULL, 0);
    EXPECT(MPI_Info_c2f, MPI_Info_f2c, MPI_INFO_ENV, 1);
    EXPECT(MPI_Message_c2f, MPI_Message_f2c, MPI_MESSAGE_NULL, 0);
    EXPECT(MPI_Message_c2f, MPI_Message_f2c, MPI_MESSAGE_NO_PROC, 1);
#undef EXPECT
    report(&v, "predefined handles convert to Open MPI's Fortran values "
           "and back");
}

static void add_ints(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((const int *)in)[i];
}

static void check_created(void)
{
    struct verdict v = {""};
    MPI_Comm dup;
    check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Fint f = MPI_Comm_c2f(dup);
    if (f < 0 || MPI_Comm_c2f(dup) != f)
        fail(&v, "MPI_Comm_c2f of a dup gives %d, then %d", (int)f,
             (int)MPI_Comm_c2f(dup));
    MPI_Comm back = MPI_Comm_f2c(f);
    if (back != dup)
        fail(&v, "MPI_Comm_f2c(%d) is not the dup", (int)f);
    int one = 1, sum = 0;
    check_rc(&v, "MPI_Allreduce",
             MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, back));
    if (sum != world_size)
        fail(&v, "an allreduce on the converted communicator gave %d", sum);
    check_rc(&v, "MPI_Comm_free", MPI_Comm_free(&dup));
    if (!on_open_mpi && MPI_Comm_f2c(f) != MPI_COMM_NULL)
        fail(&v, "MPI_Comm_f2c(%d) after MPI_Comm_free is not "
             "MPI_COMM_NULL", (int)f);
    if (!on_open_mpi && MPI_Comm_f2c(123456) != MPI_COMM_NULL)
        fail(&v, "MPI_Comm_f2c of a value never given is not MPI_COMM_NULL");
    report(&v, "a created communicator converts to an integer and back, "
           "works, and its integer names nothing once it is freed");

    v.detail[0] = '\0';
    MPI_Datatype t;
    check_rc(&v, "MPI_Type_contiguous", MPI_Type_contiguous(3, MPI_INT, &t));
    check_rc(&v, "MPI_Type_commit", MPI_Type_commit(&t));
    MPI_Fint ft = MPI_Type_c2f(t);
    int size = 0;
    MPI_Type_size(MPI_Type_f2c(ft), &size);
    if (MPI_Type_f2c(ft) != t || size != 12)
        fail(&v, "MPI_Type_f2c(MPI_Type_c2f(t)) is not t (size %d)", size);
    MPI_Group g;
    check_rc(&v, "MPI_Comm_group", MPI_Comm_group(MPI_COMM_WORLD, &g));
    if (MPI_Group_f2c(MPI_Group_c2f(g)) != g)
        fail(&v, "a group does not convert back to itself");
    MPI_Op op;
    check_rc(&v, "MPI_Op_create", MPI_Op_create(add_ints, 1, &op));
    MPI_Fint fo = MPI_Op_c2f(op);
    MPI_Op back_op = MPI_Op_f2c(fo);
    int mine = world_rank + 1, total = 0;
    check_rc(&v, "MPI_Allreduce",
             MPI_Allreduce(&mine, &total, 1, MPI_INT, back_op,
                           MPI_COMM_WORLD));
    if (back_op != op || total != world_size * (world_size + 1) / 2)
        fail(&v, "a user op brought back from its integer summed to %d",
             total);
    check_rc(&v, "MPI_Op_free", MPI_Op_free(&op));
    if (!on_open_mpi && MPI_Op_f2c(fo) != MPI_OP_NULL)
        fail(&v, "a freed op's integer still names an op");
    int peer = (world_rank + 1) % world_size;
    int from = (world_rank + world_size - 1) % world_size;
    int in = -1, out = world_rank;
    MPI_Request r;
    check_rc(&v, "MPI_Irecv",
             MPI_Irecv(&in, 1, MPI_INT, from, 5, MPI_COMM_WORLD, &r));
    MPI_Fint fr = MPI_Request_c2f(r);
    if (MPI_Request_f2c(fr) != r)
        fail(&v, "a request does not convert back to itself");
    check_rc(&v, "MPI_Send", MPI_Send(&out, 1, MPI_INT, peer, 5,
                                      MPI_COMM_WORLD));
    MPI_Request back_r = MPI_Request_f2c(fr);
    MPI_Status st;
    MPI_Fint fst[sizeof(MPI_Status) / sizeof(MPI_Fint)];
    MPI_Status st2;
    check_rc(&v, "MPI_Wait", MPI_Wait(&back_r, &st));
    check_rc(&v, "MPI_Status_c2f", MPI_Status_c2f(&st, fst));
    check_rc(&v, "MPI_Status_f2c", MPI_Status_f2c(fst, &st2));
    int count = -1;
    MPI_Get_count(&st2, MPI_INT, &count);
    if (in != from || st2.MPI_SOURCE != from || st2.MPI_TAG != 5 ||
        count != 1)
        fail(&v, "the request brought back from its integer received %d "
             "from %d (tag %d, count %d)", in, st2.MPI_SOURCE, st2.MPI_TAG,
             count);
    if (!on_open_mpi && MPI_Request_f2c(fr) != MPI_REQUEST_NULL)
        fail(&v, "a completed request's integer still names a request");
    MPI_Group_free(&g);
    MPI_Type_free(&t);
    report(&v, "datatypes, groups, ops and requests convert back to themselves; "
           "a request waited on through its converted handle completes, "
           "its status survives MPI_Status_c2f/f2c; a user op converted "
           "back reduces");
}

/* A program's own error handler, codes and strings. */
static int handler_calls, handler_code;
static MPI_Comm handler_comm;

static void record_error(MPI_Comm *comm, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_comm = *comm;
}

static void check_user_errors(void)
{
    struct verdict v = {""};
    MPI_Comm dup;
    MPI_Errhandler eh;
    check_rc(&v, "MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    check_rc(&v, "MPI_Comm_create_errhandler",
             MPI_Comm_create_errhandler(record_error, &eh));
    check_rc(&v, "MPI_Comm_set_errhandler", MPI_Comm_set_errhandler(dup, eh));
    check_rc(&v, "MPI_Errhandler_free", MPI_Errhandler_free(&eh));
    if (eh != MPI_ERRHANDLER_NULL)
        fail(&v, "MPI_Errhandler_free left the handle set");
    /* The communicator keeps the handler its handle was freed from. */
    int x = 0;
    int rc = MPI_Send(&x, -1, MPI_INT, 0, 0, dup);
    if (error_class(rc) != MPI_ERR_COUNT || handler_calls != 1 ||
        error_class(handler_code) != MPI_ERR_COUNT || handler_comm != dup)
        fail(&v, "a negative count: returned %d, handler called %d times "
             "with %d", rc, handler_calls, handler_code);
    report(&v, "a user error handler sees an error on its communicator");

    v.detail[0] = '\0';
    int cls, code, code2;
    check_rc(&v, "MPI_Add_error_class", MPI_Add_error_class(&cls));
    check_rc(&v, "MPI_Add_error_code", MPI_Add_error_code(cls, &code));
    check_rc(&v, "MPI_Add_error_code", MPI_Add_error_code(cls, &code2));
    check_rc(&v, "MPI_Add_error_string",
             MPI_Add_error_string(code, "the widget is out of order"));
    int got = -1, len = 0, *last, flag = 0;
    char text[MPI_MAX_ERROR_STRING];
    check_rc(&v, "MPI_Error_class", MPI_Error_class(code, &got));
    check_rc(&v, "MPI_Error_string", MPI_Error_string(code, text, &len));
    check_rc(&v, "MPI_Comm_get_attr",
             MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    if (cls <= MPI_ERR_LASTCODE || code == cls || code2 == code ||
        got != cls || strcmp(text, "the widget is out of order") != 0 ||
        !flag || *last < code2)
        fail(&v, "class %d, codes %d %d: class of code %d, string '%s', "
             "MPI_LASTUSEDCODE %d", cls, code, code2, got, text,
             flag ? *last : -1);
    handler_calls = 0;
    check_rc(&v, "MPI_Comm_call_errhandler",
             MPI_Comm_call_errhandler(dup, code));
    if (handler_calls != 1 || handler_code != code)
        fail(&v, "MPI_Comm_call_errhandler: handler called %d times with %d",
             handler_calls, handler_code);
    /* A new code of one of MPI's classes; a number that is no class is
     * refused. */
    int argcode = -1, argcls = -1, nocode = -1;
    check_rc(&v, "MPI_Add_error_code",
             MPI_Add_error_code(MPI_ERR_ARG, &argcode));
    check_rc(&v, "MPI_Error_class", MPI_Error_class(argcode, &argcls));
    if (argcode <= MPI_ERR_LASTCODE || argcls != MPI_ERR_ARG)
        fail(&v, "a code of MPI_ERR_ARG: %d, of class %d", argcode, argcls);
    if (error_class(MPI_Add_error_code(code, &nocode)) != MPI_ERR_ARG)
        fail(&v, "MPI_Add_error_code of code %d, not a class, was not "
             "refused", code);
    report(&v, "MPI_Add_error_class/code/string, a code of MPI_ERR_ARG, and "
           "MPI_Comm_call_errhandler with the new code");
    MPI_Comm_free(&dup);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    on_open_mpi = library_is_open_mpi();
    if (world_rank == 0)
        printf("# handles_check on %d rank(s)\n", world_size);
    check_predefined();
    check_created();
    check_user_errors();
    int status = finish();
    MPI_Finalize();
    return status;
}
