/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

#include "macro.h"

/*
 * A map from strings to pointers, for lookups by disk name that must not grow with the number
 * of disks (thousands on a multipath storage server). Open addressing with linear probing and
 * backward-shift deletion; the keys are borrowed: each must live as long as its entry.
 */
typedef struct Hashmap Hashmap;

/**
 * hashmap_new() - an empty map
 * Return: the map, NULL on out of memory.
 */
Hashmap *hashmap_new(void);
Hashmap *hashmap_free(Hashmap *h);
DEFINE_TRIVIAL_CLEANUP_FUNC(Hashmap *, hashmap_free);

/**
 * hashmap_put() - add an entry
 * @h: the map
 * @key: the key, borrowed
 * @value: not NULL
 *
 * Return: 0, -EEXIST when @key is there already, -ENOMEM.
 */
int hashmap_put(Hashmap *h, const char *key, void *value);

/**
 * hashmap_get() - look a key up
 * Return: its value, NULL when absent.
 */
void *hashmap_get(const Hashmap *h, const char *key);

/**
 * hashmap_remove() - take a key out
 * Return: its value, NULL when absent.
 */
void *hashmap_remove(Hashmap *h, const char *key);

size_t hashmap_size(const Hashmap *h);
