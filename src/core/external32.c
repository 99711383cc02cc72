/* external32 conversions (core/external32.h). */
#include <float.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <wchar.h>

#include "core/datatype.h"
#include "core/external32.h"
#include "core/objects.h"

enum pd_x32_how {
    PD_X32_SAME,        /* the same size: the bytes, big-endian */
    PD_X32_INT,         /* a signed integer of another size */
    PD_X32_UINT,        /* an unsigned one */
    PD_X32_LDBL,        /* long double to an IEEE quad */
};

/* One field of an element: at off of its native bytes, ns of them, es in
 * external32. */
struct pd_x32_part {
    unsigned char off, ns, es, how;
};

#define PD_X32_MAX_PARTS 4

/* The fields of pair types, laid out as the compiler lays out theirs. */
#define PD_PAIR_PARTS(a_t, a_es, a_how, b_t, b_es)                          \
    do {                                                                    \
        struct pair { a_t a; b_t b; };                                      \
        p[0] = (struct pd_x32_part){ offsetof(struct pair, a), sizeof(a_t), \
                                     a_es, a_how };                         \
        p[1] = (struct pd_x32_part){ offsetof(struct pair, b), sizeof(b_t), \
                                     b_es, PD_X32_SAME };                   \
        return 2;                                                           \
    } while (0)

/* A long double this converts: the x87 80-bit format, or a quad already. */
static bool pd_ldbl_known(void)
{
    return LDBL_MANT_DIG == 64 || LDBL_MANT_DIG == 113;
}

/* n parts of one size, side by side. */
static int pd_x32_same(struct pd_x32_part *p, int n, unsigned size,
                       unsigned how, unsigned es)
{
    for (int i = 0; i < n; i++)
        p[i] = (struct pd_x32_part){ (unsigned char)(i * size),
                                     (unsigned char)size, (unsigned char)es,
                                     (unsigned char)how };
    return n;
}

/* The fields of one element of the predefined type id; 0: none has an
 * external32 form here. */
static int pd_x32_parts(int id, struct pd_x32_part *p)
{
    const unsigned ld = pd_ldbl_known() ? PD_X32_LDBL : 0;
    switch (id) {
    case PD_T_CHAR: case PD_T_SIGNED_CHAR: case PD_T_UNSIGNED_CHAR:
    case PD_T_BYTE: case PD_T_PACKED: case PD_T_INT8: case PD_T_UINT8:
    case PD_T_CHARACTER: case PD_T_C_BOOL: case PD_T_CXX_BOOL:
    case PD_T_LOGICAL1: case PD_T_INTEGER1:
    case PD_T_SHORT: case PD_T_UNSIGNED_SHORT: case PD_T_INT16:
    case PD_T_UINT16: case PD_T_INTEGER2: case PD_T_LOGICAL2:
    case PD_T_INT: case PD_T_UNSIGNED: case PD_T_INT32: case PD_T_UINT32:
    case PD_T_INTEGER: case PD_T_INTEGER4: case PD_T_LOGICAL:
    case PD_T_LOGICAL4: case PD_T_LONG_LONG_INT:
    case PD_T_UNSIGNED_LONG_LONG: case PD_T_INT64: case PD_T_UINT64:
    case PD_T_AINT: case PD_T_OFFSET: case PD_T_COUNT: case PD_T_INTEGER8:
    case PD_T_LOGICAL8: case PD_T_FLOAT: case PD_T_REAL: case PD_T_REAL4:
    case PD_T_DOUBLE: case PD_T_DOUBLE_PRECISION: case PD_T_REAL8:
        return -1;      /* one part, its own size: the caller's */
    case PD_T_LONG:
        return pd_x32_same(p, 1, sizeof(long), PD_X32_INT, 4);
    case PD_T_UNSIGNED_LONG:
        return pd_x32_same(p, 1, sizeof(long), PD_X32_UINT, 4);
    case PD_T_WCHAR:
        return pd_x32_same(p, 1, sizeof(wchar_t), PD_X32_UINT, 2);
    case PD_T_LONG_DOUBLE:
        return ld ? pd_x32_same(p, 1, sizeof(long double), ld, 16) : 0;
    case PD_T_C_COMPLEX: case PD_T_C_FLOAT_COMPLEX:
    case PD_T_CXX_FLOAT_COMPLEX: case PD_T_COMPLEX: case PD_T_COMPLEX8:
    case PD_T_2INT: case PD_T_2INTEGER: case PD_T_2REAL:
        return pd_x32_same(p, 2, 4, PD_X32_SAME, 4);
    case PD_T_C_DOUBLE_COMPLEX: case PD_T_CXX_DOUBLE_COMPLEX:
    case PD_T_DOUBLE_COMPLEX: case PD_T_COMPLEX16: case PD_T_2DBLPREC:
        return pd_x32_same(p, 2, 8, PD_X32_SAME, 8);
    case PD_T_2COMPLEX:
        return pd_x32_same(p, 4, 4, PD_X32_SAME, 4);
    case PD_T_2DOUBLE_COMPLEX:
        return pd_x32_same(p, 4, 8, PD_X32_SAME, 8);
    case PD_T_C_LONG_DOUBLE_COMPLEX: case PD_T_CXX_LONG_DOUBLE_COMPLEX:
    case PD_T_LONG_DOUBLE_COMPLEX:
        return ld ? pd_x32_same(p, 2, sizeof(long double), ld, 16) : 0;
    case PD_T_FLOAT_INT:
        PD_PAIR_PARTS(float, 4, PD_X32_SAME, int, 4);
    case PD_T_DOUBLE_INT:
        PD_PAIR_PARTS(double, 8, PD_X32_SAME, int, 4);
    case PD_T_SHORT_INT:
        PD_PAIR_PARTS(short, 2, PD_X32_SAME, int, 4);
    case PD_T_LONG_INT:
        PD_PAIR_PARTS(long, 4, PD_X32_INT, int, 4);
    case PD_T_LONG_DOUBLE_INT:
        if (!ld)
            return 0;
        PD_PAIR_PARTS(long double, 16, PD_X32_LDBL, int, 4);
    default:
        return 0;       /* half floats, REAL*2, REAL*16, INTEGER*16 */
    }
}

/* The parts of an element of t (a predefined type or one derived from a
 * single one) and its native bytes; 0 parts: no external32 form. */
static int pd_x32_element(const struct ompi_datatype_t *t,
                          struct pd_x32_part *p, size_t *native)
{
    *native = t->base_count ? pd_type_packed(t) / t->base_count : 0;
    if (t->base_id < 0 || *native == 0)
        return 0;
    int n = pd_x32_parts(t->base_id, p);
    if (n < 0)
        return pd_x32_same(p, 1, (unsigned)*native, PD_X32_SAME,
                           (unsigned)*native);
    /* The parts must lie within the element as it packs. */
    for (int i = 0; i < n; i++)
        if ((size_t)p[i].off + p[i].ns > *native)
            return 0;
    return n;
}

static void pd_put_be(unsigned char *out, uint64_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++)
        out[i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
}

static uint64_t pd_get_be(const unsigned char *in, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes; i++)
        v = v << 8 | in[i];
    return v;
}

/* The native integer of ns bytes at in, as a 64-bit one. */
static uint64_t pd_load_native(const unsigned char *in, unsigned ns,
                               bool is_signed)
{
    switch (ns) {
    case 2: { uint16_t u; int16_t s; memcpy(&u, in, 2); memcpy(&s, in, 2);
              return is_signed ? (uint64_t)(int64_t)s : u; }
    case 4: { uint32_t u; int32_t s; memcpy(&u, in, 4); memcpy(&s, in, 4);
              return is_signed ? (uint64_t)(int64_t)s : u; }
    default: { uint64_t u; memcpy(&u, in, 8); return u; }
    }
}

static void pd_store_native(unsigned char *out, unsigned ns, uint64_t v)
{
    switch (ns) {
    case 2: { uint16_t u = (uint16_t)v; memcpy(out, &u, 2); break; }
    case 4: { uint32_t u = (uint32_t)v; memcpy(out, &u, 4); break; }
    default: memcpy(out, &v, 8); break;
    }
}

/* A long double's bytes (x87 extended, little-endian: 64 bits of
 * mantissa with its integer bit, then sign and exponent) as a big-endian
 * IEEE quad: the same sign, exponent and bias, the fraction without the
 * integer bit, widened. A quad already is only turned around. */
static void pd_ldbl_to_quad(const unsigned char *in, unsigned char *out)
{
    if (LDBL_MANT_DIG == 113) {
        for (int i = 0; i < 16; i++)
            out[i] = in[15 - i];
        return;
    }
    uint64_t mant = 0;
    for (int i = 7; i >= 0; i--)
        mant = mant << 8 | in[i];
    uint64_t se = (uint64_t)in[9] << 8 | in[8];
    uint64_t frac = mant & 0x7fffffffffffffffULL;
    pd_put_be(out, se << 48 | frac >> 15, 8);
    pd_put_be(out + 8, (frac & 0x7fff) << 49, 8);
}

static void pd_quad_to_ldbl(const unsigned char *in, unsigned char *out,
                            unsigned ns)
{
    memset(out, 0, ns);
    if (LDBL_MANT_DIG == 113) {
        for (int i = 0; i < 16; i++)
            out[i] = in[15 - i];
        return;
    }
    uint64_t hi = pd_get_be(in, 8), lo = pd_get_be(in + 8, 8);
    uint64_t se = hi >> 48;
    uint64_t frac = (hi & 0xffffffffffffULL) << 15 | lo >> 49;
    uint64_t mant = frac | ((se & 0x7fff) != 0 ? 1ULL << 63 : 0);
    for (int i = 0; i < 8; i++)
        out[i] = (unsigned char)(mant >> (8 * i));
    out[8] = (unsigned char)se;
    out[9] = (unsigned char)(se >> 8);
}

/* n bytes of a native number big-endian, or back: the same turn. */
static void pd_big_endian(unsigned char *out, const unsigned char *in,
                          unsigned n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (unsigned i = 0; i < n; i++)
        out[i] = in[n - 1 - i];
#else
    memcpy(out, in, n);
#endif
}

/* One part of an element: native to external32; false where the value
 * does not fit (*value set). */
static bool pd_part_out(const struct pd_x32_part *p, const unsigned char *in,
                        unsigned char *out, int64_t *value)
{
    switch (p->how) {
    case PD_X32_LDBL:
        pd_ldbl_to_quad(in, out);
        return true;
    case PD_X32_INT: case PD_X32_UINT: {
        bool s = p->how == PD_X32_INT;
        uint64_t v = pd_load_native(in, p->ns, s);
        unsigned bits = 8u * p->es;
        bool fits = s ? (int64_t)v >= -(INT64_C(1) << (bits - 1)) &&
                            (int64_t)v < (INT64_C(1) << (bits - 1))
                      : v < (UINT64_C(1) << bits);
        if (!fits) {
            *value = (int64_t)v;
            return false;
        }
        pd_put_be(out, v, p->es);
        return true;
    }
    default:
        pd_big_endian(out, in, p->ns);
        return true;
    }
}

static void pd_part_in(const struct pd_x32_part *p, const unsigned char *in,
                       unsigned char *out)
{
    switch (p->how) {
    case PD_X32_LDBL:
        pd_quad_to_ldbl(in, out, p->ns);
        return;
    case PD_X32_INT: case PD_X32_UINT: {
        uint64_t v = pd_get_be(in, p->es);
        unsigned bits = 8u * p->es;
        if (p->how == PD_X32_INT && bits < 64 && (v >> (bits - 1)) & 1)
            v |= ~UINT64_C(0) << bits;          /* sign-extended */
        pd_store_native(out, p->ns, v);
        return;
    }
    default:
        pd_big_endian(out, in, p->ns);
        return;
    }
}

/* The walk over a stream's runs (pd_type_stream_runs). */
struct pd_x32_walk {
    int dir;                    /* 0: size only; 1: pack; -1: unpack */
    const unsigned char *in;
    unsigned char *out;
    size_t bytes;               /* external32 bytes so far */
    struct pd_x32_fail *why;
};

static bool pd_x32_run(void *ctx, const struct ompi_datatype_t *t, size_t n)
{
    struct pd_x32_walk *w = ctx;
    struct pd_x32_part p[PD_X32_MAX_PARTS];
    size_t native;
    int parts = pd_x32_element(t, p, &native);
    if (parts == 0) {
        *w->why = (struct pd_x32_fail){ t, 0, 0 };
        return false;
    }
    size_t ext = 0;
    for (int i = 0; i < parts; i++)
        ext += p[i].es;
    w->bytes += n * ext;
    for (size_t k = 0; w->dir != 0 && k < n; k++) {
        for (int i = 0; i < parts; i++) {
            if (w->dir > 0) {
                int64_t value;
                if (!pd_part_out(&p[i], w->in + p[i].off, w->out, &value)) {
                    *w->why = (struct pd_x32_fail){ t, value, 1 };
                    return false;
                }
                w->out += p[i].es;
            } else {
                pd_part_in(&p[i], w->in, w->out + p[i].off);
                w->in += p[i].es;
            }
        }
        if (w->dir > 0) {
            w->in += native;
        } else {
            w->out += native;
        }
    }
    return true;
}

int pd_x32_size(const struct ompi_datatype_t *type, size_t count,
                size_t *bytes, struct pd_x32_fail *why)
{
    struct pd_x32_walk w = { 0, NULL, NULL, 0, why };
    if (!pd_type_stream_runs(type, count, pd_x32_run, &w))
        return -1;
    *bytes = w.bytes;
    return 0;
}

int pd_x32_pack(const struct ompi_datatype_t *type, size_t count,
                const void *native, void *ext, struct pd_x32_fail *why)
{
    struct pd_x32_walk w = { 1, native, ext, 0, why };
    return pd_type_stream_runs(type, count, pd_x32_run, &w) ? 0 : -1;
}

int pd_x32_unpack(const struct ompi_datatype_t *type, size_t count,
                  const void *ext, void *native, struct pd_x32_fail *why)
{
    struct pd_x32_walk w = { -1, ext, native, 0, why };
    return pd_type_stream_runs(type, count, pd_x32_run, &w) ? 0 : -1;
}
