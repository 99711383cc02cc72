/* Scratch buffers for non-contiguous datatypes (core/type_stage.h). */
#include <stdlib.h>

#include "core/objects.h"
#include "core/scratch.h"
#include "core/type_stage.h"

struct pd_type_stage *pd_stage_new(void)
{
    return calloc(1, sizeof(struct pd_type_stage));
}

int pd_stage_add(struct pd_type_stage *st, void *user,
                 struct ompi_datatype_t *type, size_t count, size_t offset,
                 bool in, bool out)
{
    if (st->n == st->cap) {
        size_t cap = st->cap ? 2 * st->cap : 4;
        struct pd_stage_block *b = realloc(st->blocks, cap * sizeof(*b));
        if (b == NULL)
            return -1;
        st->blocks = b;
        st->cap = cap;
    }
    pd_type_retain(type);
    st->blocks[st->n++] = (struct pd_stage_block){ user, type, count, offset,
                                                   in, out };
    size_t end = offset + count * pd_type_packed(type);
    if (end > st->bytes)
        st->bytes = end;
    return 0;
}

int pd_stage_pack(struct pd_type_stage *st)
{
    st->packed = pd_scratch_take(st->bytes);
    if (st->packed == NULL)
        return -1;
    for (size_t i = 0; i < st->n; i++) {
        const struct pd_stage_block *b = &st->blocks[i];
        if (b->in)
            pd_type_pack(b->type, b->user, 0,
                         b->count * pd_type_packed(b->type),
                         st->packed + b->offset);
    }
    return 0;
}

int pd_stage_unpack(const struct pd_type_stage *st, size_t limit)
{
    int rc = 0;
    for (; st != NULL; st = st->next) {
        if (st->unpacked)
            continue;
        bool wrote = false;
        for (size_t i = 0; i < st->n; i++) {
            const struct pd_stage_block *b = &st->blocks[i];
            size_t bytes = b->count * pd_type_packed(b->type);
            if (!b->out || b->offset >= limit)
                continue;
            if (bytes > limit - b->offset)
                bytes = limit - b->offset;
            pd_type_unpack(b->type, b->user, 0, bytes,
                           st->packed + b->offset);
            wrote = true;
        }
        if (wrote && st->mirror != NULL &&
            st->copy_back(st->mirror_of, st->mirror, st->mirror_bytes) != 0)
            rc = -1;
    }
    return rc;
}

bool pd_stage_by_pieces(const struct pd_type_stage *st)
{
    return st != NULL && st->next == NULL && st->mirror == NULL;
}

/* Block b's share of bytes [from, from + n) of the scratch buffer: its
 * first byte there, and how many (0: none). */
static size_t pd_block_share(const struct pd_stage_block *b, size_t from,
                             size_t n, size_t *lo)
{
    size_t hi = b->offset + b->count * pd_type_packed(b->type);
    *lo = b->offset > from ? b->offset : from;
    if (hi > from + n)
        hi = from + n;
    return hi > *lo ? hi - *lo : 0;
}

void pd_stage_unpack_piece(struct pd_type_stage *st, size_t from, size_t n,
                           const void *data)
{
    st->unpacked = true;
    for (size_t i = 0; i < st->n; i++) {
        const struct pd_stage_block *b = &st->blocks[i];
        size_t lo, len = pd_block_share(b, from, n, &lo);
        if (b->out && len > 0)
            pd_type_unpack(b->type, b->user, lo - b->offset, len,
                           (const char *)data + (lo - from));
    }
}

void pd_stage_pack_piece(const struct pd_type_stage *st, size_t from,
                         size_t n, void *out)
{
    for (size_t i = 0; i < st->n; i++) {
        const struct pd_stage_block *b = &st->blocks[i];
        size_t lo, len = pd_block_share(b, from, n, &lo);
        if (b->in && len > 0)
            pd_type_pack(b->type, b->user, lo - b->offset, len,
                         (char *)out + (lo - from));
    }
}

void pd_stage_packer(void *st, size_t from, size_t n, void *out)
{
    pd_stage_pack_piece(st, from, n, out);
}

void pd_stage_free(struct pd_type_stage *st)
{
    while (st != NULL) {
        struct pd_type_stage *next = st->next;
        for (size_t i = 0; i < st->n; i++)
            pd_type_release(st->blocks[i].type);
        free(st->blocks);
        pd_scratch_give(st->packed);
        free(st->mirror);
        free(st);
        st = next;
    }
}
