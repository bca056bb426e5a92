/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"

typedef struct Entry {
        const char *key;        /* NULL: free slot */
        void *value;
} Entry;

struct Hashmap {
        Entry *slots;
        size_t n_slots;         /* a power of two, or 0 */
        size_t n_entries;
};

/* FNV-1a: disk names are short and not chosen by an attacker who could aim at collisions
 * (the kernel names them). */
static size_t hash_string(const char *s) {
        uint64_t h = UINT64_C(14695981039346656037);

        for (; *s; s++)
                h = (h ^ (unsigned char) *s) * UINT64_C(1099511628211);
        return (size_t) (h ^ (h >> 32));
}

Hashmap *hashmap_new(void) {
        return calloc(1, sizeof(Hashmap));
}

Hashmap *hashmap_free(Hashmap *h) {
        if (h)
                free(h->slots);
        free(h);
        return NULL;
}

size_t hashmap_size(const Hashmap *h) {
        return h ? h->n_entries : 0;
}

static Entry *find_slot(Entry *slots, size_t n_slots, const char *key) {
        size_t mask = n_slots - 1;

        for (size_t i = hash_string(key) & mask;; i = (i + 1) & mask)
                if (!slots[i].key || strcmp(slots[i].key, key) == 0)
                        return &slots[i];
}

static int grow(Hashmap *h) {
        size_t n = h->n_slots ? h->n_slots * 2 : 16;
        Entry *slots;

        if (n > SIZE_MAX / sizeof(Entry))
                return -ENOMEM;
        slots = calloc(n, sizeof(Entry));
        if (!slots)
                return -ENOMEM;
        for (size_t i = 0; i < h->n_slots; i++)
                if (h->slots[i].key)
                        *find_slot(slots, n, h->slots[i].key) = h->slots[i];
        free(h->slots);
        h->slots = slots;
        h->n_slots = n;
        return 0;
}

int hashmap_put(Hashmap *h, const char *key, void *value) {
        Entry *e;
        int r;

        assert(h && key && value);
        /* At most 3/4 full: probe sequences stay short. */
        if ((h->n_entries + 1) * 4 > h->n_slots * 3) {
                r = grow(h);
                if (r < 0)
                        return r;
        }
        e = find_slot(h->slots, h->n_slots, key);
        if (e->key)
                return -EEXIST;
        *e = (Entry) { key, value };
        h->n_entries++;
        return 0;
}

void *hashmap_get(const Hashmap *h, const char *key) {
        assert(key);
        if (!h || h->n_entries == 0)
                return NULL;
        return find_slot(h->slots, h->n_slots, key)->value;
}

void *hashmap_remove(Hashmap *h, const char *key) {
        size_t mask, i, j;
        void *value;

        assert(key);
        if (!h || h->n_entries == 0)
                return NULL;
        mask = h->n_slots - 1;
        i = (size_t) (find_slot(h->slots, h->n_slots, key) - h->slots);
        if (!h->slots[i].key)
                return NULL;
        value = h->slots[i].value;
        h->n_entries--;

        /* Backward shift: move up every later entry of the run whose home slot is not
         * between the hole and it, so that no lookup stops at the hole. */
        for (j = (i + 1) & mask; h->slots[j].key; j = (j + 1) & mask) {
                size_t home = hash_string(h->slots[j].key) & mask;

                if (((j - home) & mask) >= ((j - i) & mask)) {
                        h->slots[i] = h->slots[j];
                        i = j;
                }
        }
        h->slots[i] = (Entry) {};
        return value;
}
