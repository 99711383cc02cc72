/*
 * The BKCL (Kunlun XPU collective library) and XPU runtime entry points
 * pdmpi's BKCL binding calls, declared as PaddlePaddle calls them. The
 * SDK's own headers (xpu/bkcl.h, xpu/runtime.h) are not public: the
 * shapes below follow PaddlePaddle's callers (argument order: comm first;
 * all_gather takes the count before recvbuf; send/recv take the peer
 * before the datatype); the numeric values of the enums are not known
 * publicly and are pdmpi's own. Everything BKCL-specific that rests on an
 * unverified fact is in this file, so checking it against the SDK is one
 * review. The test double in tests/bkcl_double implements exactly this.
 */
#ifndef PD_BACKEND_DCCL_BKCL_API_H
#define PD_BACKEND_DCCL_BKCL_API_H

#include <stddef.h>
#include <stdint.h>

#define PD_BKCL_LIB "libbkcl.so"
#define PD_XPURT_LIB "libxpurt.so"

#define BKCL_UNIQUE_ID_BYTES 512

typedef struct {
    char internal[BKCL_UNIQUE_ID_BYTES];
} BKCLUniqueId;

typedef struct BKCLContext *BKCLContext_t;
typedef void *XPUStream;

typedef enum {
    BKCL_SUCCESS = 0,
    BKCL_INVALID_ARGUMENT = 1,
    BKCL_RUNTIME_ERROR = 2,
    BKCL_SYSTEM_ERROR = 3,
    BKCL_INTERNAL_ERROR = 4,
} BKCLResult_t;

typedef enum {
    BKCL_FLOAT = 0,
    BKCL_FLOAT16 = 1,
    BKCL_BFLOAT16 = 2,
    BKCL_FLOAT64 = 3,
    BKCL_UINT8 = 4,
    BKCL_INT32 = 5,
    BKCL_INT64 = 6,
} BKCLDataType;

typedef enum {
    BKCL_ADD = 0,
    BKCL_PRODUCT = 1,
    BKCL_MIN = 2,
    BKCL_MAX = 3,
} BKCLOp;

/* XPU runtime: memcpy directions and pointer attributes. */
enum {
    XPU_HOST_TO_DEVICE = 0,
    XPU_DEVICE_TO_HOST = 1,
    XPU_DEVICE_TO_DEVICE = 2,
};

enum {
    XPU_MEMORY_HOST = 0,        /* not XPU memory */
    XPU_MEMORY_DEVICE = 1,
};

typedef struct {
    int memory_type;            /* XPU_MEMORY_* */
    int device;                 /* device id when XPU_MEMORY_DEVICE */
} pd_xpu_pointer_attrs;

/* libbkcl */
typedef BKCLResult_t (*pd_bkcl_get_unique_id_fn)(BKCLUniqueId *id);
typedef BKCLResult_t (*pd_bkcl_init_rank_fn)(BKCLContext_t *comm, int rank,
                                             int nranks,
                                             const BKCLUniqueId *id);
typedef BKCLResult_t (*pd_bkcl_destroy_context_fn)(BKCLContext_t comm);
typedef BKCLResult_t (*pd_bkcl_all_reduce_fn)(BKCLContext_t comm,
                                              const void *sendbuf,
                                              void *recvbuf, size_t count,
                                              BKCLDataType dtype, BKCLOp op,
                                              XPUStream stream);
typedef BKCLResult_t (*pd_bkcl_broadcast_fn)(BKCLContext_t comm,
                                             const void *sendbuf,
                                             void *recvbuf, size_t count,
                                             BKCLDataType dtype, int root,
                                             XPUStream stream);
typedef BKCLResult_t (*pd_bkcl_reduce_fn)(BKCLContext_t comm,
                                          const void *sendbuf, void *recvbuf,
                                          size_t count, BKCLDataType dtype,
                                          BKCLOp op, int root,
                                          XPUStream stream);
typedef BKCLResult_t (*pd_bkcl_all_gather_fn)(BKCLContext_t comm,
                                              const void *sendbuf,
                                              size_t sendcount,
                                              void *recvbuf,
                                              BKCLDataType dtype,
                                              XPUStream stream);
typedef BKCLResult_t (*pd_bkcl_reduce_scatter_fn)(BKCLContext_t comm,
                                                  const void *sendbuf,
                                                  void *recvbuf,
                                                  size_t recvcount,
                                                  BKCLDataType dtype,
                                                  BKCLOp op,
                                                  XPUStream stream);
typedef BKCLResult_t (*pd_bkcl_send_fn)(BKCLContext_t comm, const void *buf,
                                        size_t count, int peer,
                                        BKCLDataType dtype, XPUStream stream);
typedef BKCLResult_t (*pd_bkcl_recv_fn)(BKCLContext_t comm, void *buf,
                                        size_t count, int peer,
                                        BKCLDataType dtype, XPUStream stream);
typedef BKCLResult_t (*pd_bkcl_group_fn)(void);

/* libxpurt (0 = success) */
typedef int (*pd_xpu_device_count_fn)(int *count);
typedef int (*pd_xpu_set_device_fn)(int device);
typedef int (*pd_xpu_current_device_fn)(int *device);
typedef int (*pd_xpu_malloc_fn)(void **ptr, uint64_t bytes);
typedef int (*pd_xpu_free_fn)(void *ptr);
typedef int (*pd_xpu_memcpy_fn)(void *dst, const void *src, uint64_t bytes,
                                int kind);
typedef int (*pd_xpu_stream_create_fn)(XPUStream *stream);
typedef int (*pd_xpu_stream_destroy_fn)(XPUStream stream);
typedef int (*pd_xpu_wait_fn)(XPUStream stream);
typedef int (*pd_xpu_pointer_get_attrs_fn)(pd_xpu_pointer_attrs *attrs,
                                           const void *ptr);

#endif
