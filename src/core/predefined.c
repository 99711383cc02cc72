/*
 * Every predefined object Open MPI's libmpi.so.40 exports, at exactly
 * Open MPI's symbol sizes.
 *
 * Executables built by mpicc take copy relocations of the objects they
 * name: the loader reserves a slot of the library's st_size at link time
 * and copies these initial bytes into it at start-up, after which every
 * reference -- the library's own, through the GOT -- points at the
 * executable's copy. So (a) the sizes below are ABI, and (b) everything a
 * predefined object needs before MPI_Init (names, sizes, ids) is a static
 * initializer, copied along with the object.
 */
#include "core/objects.h"
#include "pdmpi.h"

#define PD_ASSERT_ABI_SIZE(type, size) \
    _Static_assert(sizeof(type) == (size), #type " must be " #size " bytes (Open MPI ABI)")

PD_ASSERT_ABI_SIZE(struct ompi_predefined_communicator_t, 512);
PD_ASSERT_ABI_SIZE(struct ompi_predefined_datatype_t, 512);
PD_ASSERT_ABI_SIZE(struct ompi_predefined_op_t, 2048);
PD_ASSERT_ABI_SIZE(struct ompi_predefined_errhandler_t, 1024);
PD_ASSERT_ABI_SIZE(struct ompi_predefined_group_t, 256);
PD_ASSERT_ABI_SIZE(struct ompi_predefined_info_t, 256);
PD_ASSERT_ABI_SIZE(struct ompi_predefined_request_t, 256);
PD_ASSERT_ABI_SIZE(struct ompi_predefined_message_t, 256);
PD_ASSERT_ABI_SIZE(struct ompi_predefined_win_t, 512);
PD_ASSERT_ABI_SIZE(struct ompi_predefined_file_t, 1536);
PD_ASSERT_ABI_SIZE(struct ompi_status_public_t, 24);
PD_ASSERT_ABI_SIZE(MPI_Fint *, 8);

/* Communicators: rank, size and state are filled in by MPI_Init. */
#define PD_COMM_INIT(kind_, name_)                                        \
    { .obj = { .magic = PD_MAGIC_COMM, .kind = (kind_), .rank = 0,       \
               .size = 0, .errhandler = NULL, .state = NULL,             \
               .name = name_ } }

struct ompi_predefined_communicator_t ompi_mpi_comm_world =
    PD_COMM_INIT(PD_COMM_WORLD, "MPI_COMM_WORLD");
struct ompi_predefined_communicator_t ompi_mpi_comm_self =
    PD_COMM_INIT(PD_COMM_SELF, "MPI_COMM_SELF");
struct ompi_predefined_communicator_t ompi_mpi_comm_null =
    PD_COMM_INIT(PD_COMM_NULL, "MPI_COMM_NULL");

#define PD_TYPE(sym, id_, size_, extent_, name_, cls, ek)                   \
    struct ompi_predefined_datatype_t sym = {                              \
        .obj = { .magic = PD_MAGIC_TYPE, .id = (id_), .size = (size_),     \
                 .extent = (extent_), .name = name_, .base_id = (id_),     \
                 .base_count = 1, .elements = (cls) == PD_TC_PAIR ? 2 : 1, \
                 .contiguous = true, .committed = true,                    \
                 .true_extent = (extent_), .packed = (extent_), .refs = 1 } };
#include "core/datatype_list.h"
#undef PD_TYPE

/* Each predefined datatype by its id (pd_type_base). */
static struct ompi_datatype_t *const pd_predefined_types[PD_TYPE_COUNT] = {
#define PD_TYPE(sym, id_, size_, extent_, name_, cls, ek) [id_] = &sym.obj,
#include "core/datatype_list.h"
#undef PD_TYPE
};

struct ompi_datatype_t *pd_type_base(const struct ompi_datatype_t *type)
{
    int id = type->base_id;
    return id >= 0 && id < PD_TYPE_COUNT ? pd_predefined_types[id] : NULL;
}

#define PD_OP_INIT(id_, name_)                                            \
    { .obj = { .magic = PD_MAGIC_OP, .id = (id_), .name = name_,          \
               .commutative = true } }

struct ompi_predefined_op_t ompi_mpi_op_null = PD_OP_INIT(PD_OP_NULL, "MPI_OP_NULL");
struct ompi_predefined_op_t ompi_mpi_op_max = PD_OP_INIT(PD_OP_MAX, "MPI_MAX");
struct ompi_predefined_op_t ompi_mpi_op_min = PD_OP_INIT(PD_OP_MIN, "MPI_MIN");
struct ompi_predefined_op_t ompi_mpi_op_sum = PD_OP_INIT(PD_OP_SUM, "MPI_SUM");
struct ompi_predefined_op_t ompi_mpi_op_prod = PD_OP_INIT(PD_OP_PROD, "MPI_PROD");
struct ompi_predefined_op_t ompi_mpi_op_land = PD_OP_INIT(PD_OP_LAND, "MPI_LAND");
struct ompi_predefined_op_t ompi_mpi_op_band = PD_OP_INIT(PD_OP_BAND, "MPI_BAND");
struct ompi_predefined_op_t ompi_mpi_op_lor = PD_OP_INIT(PD_OP_LOR, "MPI_LOR");
struct ompi_predefined_op_t ompi_mpi_op_bor = PD_OP_INIT(PD_OP_BOR, "MPI_BOR");
struct ompi_predefined_op_t ompi_mpi_op_lxor = PD_OP_INIT(PD_OP_LXOR, "MPI_LXOR");
struct ompi_predefined_op_t ompi_mpi_op_bxor = PD_OP_INIT(PD_OP_BXOR, "MPI_BXOR");
struct ompi_predefined_op_t ompi_mpi_op_maxloc = PD_OP_INIT(PD_OP_MAXLOC, "MPI_MAXLOC");
struct ompi_predefined_op_t ompi_mpi_op_minloc = PD_OP_INIT(PD_OP_MINLOC, "MPI_MINLOC");
struct ompi_predefined_op_t ompi_mpi_op_replace = PD_OP_INIT(PD_OP_REPLACE, "MPI_REPLACE");
struct ompi_predefined_op_t ompi_mpi_op_no_op = PD_OP_INIT(PD_OP_NO_OP, "MPI_NO_OP");
struct ompi_predefined_op_t pdmpi_op_avg = PD_OP_INIT(PD_OP_AVG, "MPIX_OP_AVG");

#define PD_ERRH_INIT(kind_, name_) \
    { .obj = { .magic = PD_MAGIC_ERRH, .kind = (kind_), .name = name_ } }

struct ompi_predefined_errhandler_t ompi_mpi_errhandler_null =
    PD_ERRH_INIT(PD_ERRH_NULL, "MPI_ERRHANDLER_NULL");
struct ompi_predefined_errhandler_t ompi_mpi_errors_are_fatal =
    PD_ERRH_INIT(PD_ERRH_FATAL, "MPI_ERRORS_ARE_FATAL");
struct ompi_predefined_errhandler_t ompi_mpi_errors_return =
    PD_ERRH_INIT(PD_ERRH_RETURN, "MPI_ERRORS_RETURN");
struct ompi_predefined_errhandler_t ompi_mpi_errors_throw_exceptions =
    PD_ERRH_INIT(PD_ERRH_THROW, "MPI::ERRORS_THROW_EXCEPTIONS");

#define PD_SIMPLE_INIT(magic_, id_) { .obj = { .magic = (magic_), .id = (id_) } }

/* Predefined groups are never freed: their reference count starts high. */
struct ompi_predefined_group_t ompi_mpi_group_null =
    { .obj = { .magic = PD_MAGIC_GROUP, .id = 0, .size = 0,
               .rank = MPI_UNDEFINED, .refs = 1 << 30 } };
struct ompi_predefined_group_t ompi_mpi_group_empty =
    { .obj = { .magic = PD_MAGIC_GROUP, .id = 1, .size = 0,
               .rank = MPI_UNDEFINED, .refs = 1 << 30 } };
struct ompi_predefined_info_t ompi_mpi_info_null = PD_SIMPLE_INIT(PD_MAGIC_INFO, 0);
struct ompi_predefined_info_t ompi_mpi_info_env = PD_SIMPLE_INIT(PD_MAGIC_INFO, 1);
struct ompi_predefined_request_t ompi_request_null = PD_SIMPLE_INIT(PD_MAGIC_REQUEST, 0);
struct ompi_predefined_message_t ompi_message_null = PD_SIMPLE_INIT(PD_MAGIC_MESSAGE, 0);
struct ompi_predefined_message_t ompi_message_no_proc = PD_SIMPLE_INIT(PD_MAGIC_MESSAGE, 1);
struct ompi_predefined_win_t ompi_mpi_win_null = PD_SIMPLE_INIT(PD_MAGIC_WIN, 0);
/* Errors in opening and deleting files go to MPI_FILE_NULL's handler,
 * which MPI makes MPI_ERRORS_RETURN. */
struct ompi_predefined_file_t ompi_mpi_file_null = {
    .obj = { .magic = PD_MAGIC_FILE, .id = 0,
             .errhandler = &ompi_mpi_errors_return.obj } };

struct ompi_status_public_t ompi_status_empty;

/* Fortran sentinels: addresses compared by the Fortran bindings. */
static MPI_Fint pd_f_status_ignore_storage[8];
static MPI_Fint pd_f_statuses_ignore_storage[8];
MPI_Fint *MPI_F_STATUS_IGNORE = pd_f_status_ignore_storage;
MPI_Fint *MPI_F_STATUSES_IGNORE = pd_f_statuses_ignore_storage;
