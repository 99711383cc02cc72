/*
 * Element-wise reduction kernels, one plain loop per (op, element kind).
 *
 * The loops index typed arrays with no calls inside, so gcc/clang
 * vectorize them at -O2/-O3; out may alias a or b (gloo reduces in
 * place), which rules out restrict but still vectorizes behind the
 * compiler's run-time overlap check.
 */
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/reduce_kernels.h"

#define PD_KERNEL(fname, T, EXPR)                                           \
    static void fname(void *out_, const void *a_, const void *b_, size_t n, \
                      const void *ctx)                                      \
    {                                                                       \
        (void)ctx;                                                          \
        T *out = out_;                                                      \
        const T *a = a_;                                                    \
        const T *b = b_;                                                    \
        for (size_t i = 0; i < n; i++) {                                    \
            T x = a[i], y = b[i];                                           \
            out[i] = (EXPR);                                                \
        }                                                                   \
    }

/* Arithmetic and bitwise kernels for one integer type. */
#define PD_INT_KERNELS(tag, T)                                  \
    PD_KERNEL(pd_sum_##tag, T, (T)(x + y))                      \
    PD_KERNEL(pd_prod_##tag, T, (T)(x * y))                     \
    PD_KERNEL(pd_max_##tag, T, x > y ? x : y)                   \
    PD_KERNEL(pd_min_##tag, T, x < y ? x : y)                   \
    PD_KERNEL(pd_land_##tag, T, (T)((x != 0) && (y != 0)))      \
    PD_KERNEL(pd_lor_##tag, T, (T)((x != 0) || (y != 0)))       \
    PD_KERNEL(pd_lxor_##tag, T, (T)((x != 0) != (y != 0)))      \
    PD_KERNEL(pd_band_##tag, T, (T)(x & y))                     \
    PD_KERNEL(pd_bor_##tag, T, (T)(x | y))                      \
    PD_KERNEL(pd_bxor_##tag, T, (T)(x ^ y))

/* Signed overflow is undefined in C; MPI sums wrap like Open MPI's, so
 * signed types are summed and multiplied in their unsigned twin. */
#define PD_SIGNED_KERNELS(tag, T, UT)                           \
    PD_KERNEL(pd_sum_##tag, T, (T)((UT)x + (UT)y))              \
    PD_KERNEL(pd_prod_##tag, T, (T)((UT)x * (UT)y))             \
    PD_KERNEL(pd_max_##tag, T, x > y ? x : y)                   \
    PD_KERNEL(pd_min_##tag, T, x < y ? x : y)                   \
    PD_KERNEL(pd_land_##tag, T, (T)((x != 0) && (y != 0)))      \
    PD_KERNEL(pd_lor_##tag, T, (T)((x != 0) || (y != 0)))       \
    PD_KERNEL(pd_lxor_##tag, T, (T)((x != 0) != (y != 0)))      \
    PD_KERNEL(pd_band_##tag, T, (T)(x & y))                     \
    PD_KERNEL(pd_bor_##tag, T, (T)(x | y))                      \
    PD_KERNEL(pd_bxor_##tag, T, (T)(x ^ y))

#define PD_FLOAT_KERNELS(tag, T)                                \
    PD_KERNEL(pd_sum_##tag, T, x + y)                           \
    PD_KERNEL(pd_prod_##tag, T, x * y)                          \
    PD_KERNEL(pd_max_##tag, T, x > y ? x : y)                   \
    PD_KERNEL(pd_min_##tag, T, x < y ? x : y)

#define PD_COMPLEX_KERNELS(tag, T)                              \
    PD_KERNEL(pd_sum_##tag, T, x + y)                           \
    PD_KERNEL(pd_prod_##tag, T, x * y)

#define PD_LOGICAL_KERNELS(tag, T)                              \
    PD_KERNEL(pd_land_##tag, T, (T)((x != 0) && (y != 0)))      \
    PD_KERNEL(pd_lor_##tag, T, (T)((x != 0) || (y != 0)))       \
    PD_KERNEL(pd_lxor_##tag, T, (T)((x != 0) != (y != 0)))

PD_SIGNED_KERNELS(i8, int8_t, uint8_t)
PD_SIGNED_KERNELS(i16, int16_t, uint16_t)
PD_SIGNED_KERNELS(i32, int32_t, uint32_t)
PD_SIGNED_KERNELS(i64, int64_t, uint64_t)
PD_INT_KERNELS(u8, uint8_t)
PD_INT_KERNELS(u16, uint16_t)
PD_INT_KERNELS(u32, uint32_t)
PD_INT_KERNELS(u64, uint64_t)
PD_FLOAT_KERNELS(f32, float)
PD_FLOAT_KERNELS(f64, double)
PD_FLOAT_KERNELS(fld, long double)
PD_COMPLEX_KERNELS(cf32, float complex)
PD_COMPLEX_KERNELS(cf64, double complex)
PD_COMPLEX_KERNELS(cfld, long double complex)
PD_LOGICAL_KERNELS(bool, bool)
PD_LOGICAL_KERNELS(l8, int8_t)
PD_LOGICAL_KERNELS(l16, int16_t)
PD_LOGICAL_KERNELS(l32, int32_t)
PD_LOGICAL_KERNELS(l64, int64_t)

/*
 * Half precision: each pair is widened to fp32, combined, and rounded
 * back to nearest-even, as deep-learning frameworks accumulate fp16 and
 * bf16 on the host.
 */
static float pd_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);        /* inf, nan */
    } else if (exp != 0) {
        bits = sign | ((exp + 112) << 23) | (man << 13); /* normal */
    } else if (man == 0) {
        bits = sign;                                     /* zero */
    } else {                                             /* subnormal */
        int shift = 0;
        while ((man & 0x400u) == 0) {
            man <<= 1;
            shift++;
        }
        bits = sign | ((uint32_t)(113 - shift) << 23) | ((man & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof(f));
    return f;
}

static uint16_t pd_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof(x));
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t abs = x & 0x7fffffffu;
    if (abs >= 0x7f800000u)                              /* inf, nan */
        return (uint16_t)(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0));
    if (abs >= 0x477ff000u)                              /* overflow */
        return (uint16_t)(sign | 0x7c00u);
    if (abs < 0x38800000u) {                             /* subnormal */
        if (abs < 0x33000000u)
            return sign;
        uint32_t man = (abs & 0x7fffffu) | 0x800000u;
        int shift = 126 - (int)(abs >> 23);
        uint32_t half = man >> shift;           /* units of 2^-24 */
        uint32_t rest = man & ((1u << shift) - 1);
        uint32_t mid = 1u << (shift - 1);
        if (rest > mid || (rest == mid && (half & 1u)))
            half++;
        return (uint16_t)(sign | half);
    }
    uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u); /* nearest-even */
    return (uint16_t)(sign | ((rounded - 0x38000000u) >> 13));
}

static float pd_bf16_to_f32(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof(f));
    return f;
}

static uint16_t pd_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof(x));
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u);            /* quiet nan */
    x += 0x7fffu + ((x >> 16) & 1u);                     /* nearest-even */
    return (uint16_t)(x >> 16);
}

#define PD_HALF_KERNEL(fname, WIDEN, NARROW, EXPR)                          \
    static void fname(void *out_, const void *a_, const void *b_, size_t n, \
                      const void *ctx)                                      \
    {                                                                       \
        (void)ctx;                                                          \
        uint16_t *out = out_;                                               \
        const uint16_t *a = a_;                                             \
        const uint16_t *b = b_;                                             \
        for (size_t i = 0; i < n; i++) {                                    \
            float x = WIDEN(a[i]), y = WIDEN(b[i]);                         \
            out[i] = NARROW(EXPR);                                          \
        }                                                                   \
    }

#define PD_HALF_KERNELS(tag, WIDEN, NARROW)                         \
    PD_HALF_KERNEL(pd_sum_##tag, WIDEN, NARROW, x + y)              \
    PD_HALF_KERNEL(pd_prod_##tag, WIDEN, NARROW, x * y)             \
    PD_HALF_KERNEL(pd_max_##tag, WIDEN, NARROW, x > y ? x : y)      \
    PD_HALF_KERNEL(pd_min_##tag, WIDEN, NARROW, x < y ? x : y)

PD_HALF_KERNELS(f16, pd_f16_to_f32, pd_f32_to_f16)
PD_HALF_KERNELS(bf16, pd_bf16_to_f32, pd_f32_to_bf16)

#define PD_ALL_INT_OPS(tag)                                                 \
    [PD_OP_SUM] = pd_sum_##tag, [PD_OP_PROD] = pd_prod_##tag,               \
    [PD_OP_MAX] = pd_max_##tag, [PD_OP_MIN] = pd_min_##tag,                 \
    [PD_OP_LAND] = pd_land_##tag, [PD_OP_LOR] = pd_lor_##tag,               \
    [PD_OP_LXOR] = pd_lxor_##tag, [PD_OP_BAND] = pd_band_##tag,             \
    [PD_OP_BOR] = pd_bor_##tag, [PD_OP_BXOR] = pd_bxor_##tag
#define PD_ALL_FLOAT_OPS(tag)                                               \
    [PD_OP_SUM] = pd_sum_##tag, [PD_OP_PROD] = pd_prod_##tag,               \
    [PD_OP_MAX] = pd_max_##tag, [PD_OP_MIN] = pd_min_##tag
#define PD_ALL_LOGICAL_OPS(tag)                                             \
    [PD_OP_LAND] = pd_land_##tag, [PD_OP_LOR] = pd_lor_##tag,               \
    [PD_OP_LXOR] = pd_lxor_##tag

/* kernels[element kind][op]; NULL where no kernel exists. */
static const pd_reduce_fn pd_kernels[PD_EK_COUNT][PD_OP_COUNT] = {
    [PD_EK_I8] = { PD_ALL_INT_OPS(i8) },
    [PD_EK_I16] = { PD_ALL_INT_OPS(i16) },
    [PD_EK_I32] = { PD_ALL_INT_OPS(i32) },
    [PD_EK_I64] = { PD_ALL_INT_OPS(i64) },
    [PD_EK_U8] = { PD_ALL_INT_OPS(u8) },
    [PD_EK_U16] = { PD_ALL_INT_OPS(u16) },
    [PD_EK_U32] = { PD_ALL_INT_OPS(u32) },
    [PD_EK_U64] = { PD_ALL_INT_OPS(u64) },
    [PD_EK_F32] = { PD_ALL_FLOAT_OPS(f32) },
    [PD_EK_F64] = { PD_ALL_FLOAT_OPS(f64) },
    [PD_EK_FLD] = { PD_ALL_FLOAT_OPS(fld) },
    [PD_EK_CF32] = { [PD_OP_SUM] = pd_sum_cf32, [PD_OP_PROD] = pd_prod_cf32 },
    [PD_EK_CF64] = { [PD_OP_SUM] = pd_sum_cf64, [PD_OP_PROD] = pd_prod_cf64 },
    [PD_EK_CFLD] = { [PD_OP_SUM] = pd_sum_cfld, [PD_OP_PROD] = pd_prod_cfld },
    [PD_EK_BOOL] = { PD_ALL_LOGICAL_OPS(bool) },
    [PD_EK_LOGICAL8] = { PD_ALL_LOGICAL_OPS(l8) },
    [PD_EK_LOGICAL16] = { PD_ALL_LOGICAL_OPS(l16) },
    [PD_EK_LOGICAL32] = { PD_ALL_LOGICAL_OPS(l32) },
    [PD_EK_LOGICAL64] = { PD_ALL_LOGICAL_OPS(l64) },
    [PD_EK_F16] = { PD_ALL_FLOAT_OPS(f16) },
    [PD_EK_BF16] = { PD_ALL_FLOAT_OPS(bf16) },
};

pd_reduce_fn pd_kernel_lookup(enum pd_elem_kind kind, enum pd_op_id op)
{
    if (kind <= PD_EK_NONE || kind >= PD_EK_COUNT)
        return NULL;
    if (op <= PD_OP_NULL || op >= PD_OP_COUNT)
        return NULL;
    return pd_kernels[kind][op];
}

/*
 * MAXLOC / MINLOC on the pair types: the value decides; on a tie the
 * smaller index wins (MPI-3.1 section 5.9.4).
 */
#define PD_LOC_KERNELS(tag, VT, IT)                                         \
    struct pd_pair_##tag { VT v; IT i; };                                   \
    static void pd_maxloc_##tag(void *out_, const void *a_, const void *b_, \
                                size_t n, const void *ctx)                  \
    {                                                                       \
        (void)ctx;                                                          \
        struct pd_pair_##tag *out = out_;                                   \
        const struct pd_pair_##tag *a = a_, *b = b_;                        \
        for (size_t k = 0; k < n; k++) {                                    \
            struct pd_pair_##tag x = a[k], y = b[k];                        \
            if (y.v > x.v || (y.v == x.v && y.i < x.i))                     \
                x = y;                                                      \
            out[k] = x;                                                     \
        }                                                                   \
    }                                                                       \
    static void pd_minloc_##tag(void *out_, const void *a_, const void *b_, \
                                size_t n, const void *ctx)                  \
    {                                                                       \
        (void)ctx;                                                          \
        struct pd_pair_##tag *out = out_;                                   \
        const struct pd_pair_##tag *a = a_, *b = b_;                        \
        for (size_t k = 0; k < n; k++) {                                    \
            struct pd_pair_##tag x = a[k], y = b[k];                        \
            if (y.v < x.v || (y.v == x.v && y.i < x.i))                     \
                x = y;                                                      \
            out[k] = x;                                                     \
        }                                                                   \
    }

PD_LOC_KERNELS(float_int, float, int)
PD_LOC_KERNELS(double_int, double, int)
PD_LOC_KERNELS(ldouble_int, long double, int)
PD_LOC_KERNELS(short_int, short, int)
PD_LOC_KERNELS(long_int, long, int)
PD_LOC_KERNELS(int_int, int, int)
PD_LOC_KERNELS(float_float, float, float)
PD_LOC_KERNELS(double_double, double, double)

pd_reduce_fn pd_loc_kernel_lookup(enum pd_type_id type, enum pd_op_id op)
{
    bool max = op == PD_OP_MAXLOC;
    if (op != PD_OP_MAXLOC && op != PD_OP_MINLOC)
        return NULL;
    switch (type) {
    case PD_T_FLOAT_INT: return max ? pd_maxloc_float_int : pd_minloc_float_int;
    case PD_T_DOUBLE_INT: return max ? pd_maxloc_double_int : pd_minloc_double_int;
    case PD_T_LONG_DOUBLE_INT: return max ? pd_maxloc_ldouble_int : pd_minloc_ldouble_int;
    case PD_T_SHORT_INT: return max ? pd_maxloc_short_int : pd_minloc_short_int;
    case PD_T_LONG_INT: return max ? pd_maxloc_long_int : pd_minloc_long_int;
    case PD_T_2INT:
    case PD_T_2INTEGER: return max ? pd_maxloc_int_int : pd_minloc_int_int;
    case PD_T_2REAL: return max ? pd_maxloc_float_float : pd_minloc_float_float;
    case PD_T_2DBLPREC: return max ? pd_maxloc_double_double : pd_minloc_double_double;
    default: return NULL;
    }
}

#define PD_DIVIDE(T)                                                        \
    do {                                                                    \
        T *v = buf;                                                         \
        for (size_t i = 0; i < n; i++)                                      \
            v[i] = (T)(v[i] / (T)divisor);                                  \
    } while (0)

#define PD_DIVIDE_HALF(WIDEN, NARROW)                                       \
    do {                                                                    \
        uint16_t *v = buf;                                                  \
        for (size_t i = 0; i < n; i++)                                      \
            v[i] = NARROW(WIDEN(v[i]) / (float)divisor);                    \
    } while (0)

void pd_divide_elements(void *buf, size_t n, enum pd_elem_kind kind,
                        int divisor)
{
    switch (kind) {
    case PD_EK_I8: PD_DIVIDE(int8_t); break;
    case PD_EK_I16: PD_DIVIDE(int16_t); break;
    case PD_EK_I32: PD_DIVIDE(int32_t); break;
    case PD_EK_I64: PD_DIVIDE(int64_t); break;
    case PD_EK_U8: PD_DIVIDE(uint8_t); break;
    case PD_EK_U16: PD_DIVIDE(uint16_t); break;
    case PD_EK_U32: PD_DIVIDE(uint32_t); break;
    case PD_EK_U64: PD_DIVIDE(uint64_t); break;
    case PD_EK_F32: PD_DIVIDE(float); break;
    case PD_EK_F64: PD_DIVIDE(double); break;
    case PD_EK_FLD: PD_DIVIDE(long double); break;
    case PD_EK_F16: PD_DIVIDE_HALF(pd_f16_to_f32, pd_f32_to_f16); break;
    case PD_EK_BF16: PD_DIVIDE_HALF(pd_bf16_to_f32, pd_f32_to_bf16); break;
    default: break;   /* pd_op_allows admits no other kind */
    }
}
