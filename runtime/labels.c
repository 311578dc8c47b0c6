/* labels.c - the label registry of instr_event and instr_counter: one id
 * per distinct label text, its INSTR_META_LABEL record written once (and
 * again in a fork child's dump).
 *
 * The first call with a label pointer registers it under the meta lock
 * (texts compared, so one text is one id); the pointer then goes into a
 * fixed open-addressing table that later calls read without a lock:
 *
 *   slot = hash(ptr) & (LABEL_SLOTS - 1), probing linearly
 *   { id, ptr }: id stored first, ptr published with release; a reader that
 *   sees ptr (acquire) sees its id; an empty slot (ptr NULL) ends the probe.
 *
 * The table is never more than half full; beyond that, new pointers are
 * looked up under the lock each time (correct, slower).  All storage is
 * static: nothing is allocated, ever.
 *
 * Layering: below api.c (its only user) and lifecycle.c (the fork child's
 * re-emission), above metadata.c (which writes the records).
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

#define LABEL_SLOTS 4096u  /* pointer cache; at most half full */
#define LABEL_MAX 4096u    /* distinct texts */
#define LABEL_TEXT 256u    /* bytes of a label text kept (longer texts are cut) */

struct label_slot {
    const char *ptr; /* published last (release); NULL = empty */
    uint32_t id;
};

static struct label_slot slots[LABEL_SLOTS];
static uint32_t slots_used;                /* meta lock */
static char texts[LABEL_MAX][LABEL_TEXT];  /* id - 1 -> text (meta lock) */
static uint32_t label_count;               /* ids are 1..label_count (meta lock) */

static inline size_t slot_of(const char *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 40) & (LABEL_SLOTS - 1);
}

uint32_t instr__label_cached(const char *label)
{
    for (size_t i = slot_of(label), n = 0; n < LABEL_SLOTS; i = (i + 1) & (LABEL_SLOTS - 1), n++) {
        const char *p = __atomic_load_n(&slots[i].ptr, __ATOMIC_ACQUIRE);
        if (p == label)
            return slots[i].id;
        if (!p)
            return 0;
    }
    return 0;
}

static void put_label(uint32_t id)
{
    instr__meta_label(id, texts[id - 1]);
}

/* Slow path: find or make the id of label's text; cache the pointer. */
uint32_t instr__label_register(const char *label)
{
    int saved = errno;
    uint32_t id = 0;
    pthread_mutex_lock(&instr__rt.meta_lock);
    if ((id = instr__label_cached(label)))
        goto out;
    char text[LABEL_TEXT];
    size_t len = strnlen(label, LABEL_TEXT - 1);
    memcpy(text, label, len);
    text[len] = 0;
    for (uint32_t i = 0; i < label_count; i++)
        if (!strcmp(texts[i], text)) {
            id = i + 1;
            break;
        }
    if (!id) {
        if (label_count == LABEL_MAX)
            goto out; /* not recorded */
        memcpy(texts[label_count], text, len + 1);
        id = ++label_count;
        put_label(id);
    }
    if (slots_used < LABEL_SLOTS / 2) {
        size_t i = slot_of(label);
        while (slots[i].ptr)
            i = (i + 1) & (LABEL_SLOTS - 1);
        slots[i].id = id;
        __atomic_store_n(&slots[i].ptr, label, __ATOMIC_RELEASE);
        slots_used++;
    }
out:
    pthread_mutex_unlock(&instr__rt.meta_lock);
    errno = saved;
    return id;
}

/* Fork child (meta lock held): the label records again, same ids. */
void instr__labels_reemit(void)
{
    for (uint32_t id = 1; id <= label_count; id++)
        put_label(id);
}
