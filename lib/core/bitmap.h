/* SPDX-License-Identifier: MIT */
/*
 * Bitmaps of unsigned longs, with the kernel's list format for text.
 */
#ifndef UKS_LIB_CORE_BITMAP_H
#define UKS_LIB_CORE_BITMAP_H

#include <stdbool.h>
#include <stddef.h>

#define BITS_PER_LONG (8 * sizeof(unsigned long))
#define BITS_TO_LONGS(n) (((n) + BITS_PER_LONG - 1) / BITS_PER_LONG)
#define BIT_WORD(nr) ((nr) / BITS_PER_LONG)
#define BIT_MASK(nr) (1UL << ((nr) % BITS_PER_LONG))

static inline void set_bit(unsigned int nr, unsigned long *map)
{
	map[BIT_WORD(nr)] |= BIT_MASK(nr);
}

static inline void clear_bit(unsigned int nr, unsigned long *map)
{
	map[BIT_WORD(nr)] &= ~BIT_MASK(nr);
}

static inline bool test_bit(unsigned int nr, const unsigned long *map)
{
	return map[BIT_WORD(nr)] & BIT_MASK(nr);
}

/* Kernel names, mapped to prefixed symbols so libuks.a cannot clash. */
#define bitmap_zero		__uks_bitmap_zero
#define bitmap_set		__uks_bitmap_set
#define bitmap_weight		__uks_bitmap_weight
#define find_next_bit		__uks_find_next_bit
#define bitmap_parselist	__uks_bitmap_parselist
#define bitmap_print_list	__uks_bitmap_print_list
#define bitmap_print_hex	__uks_bitmap_print_hex
#define bitmap_parse_hex	__uks_bitmap_parse_hex

void bitmap_zero(unsigned long *map, unsigned int nbits);
void bitmap_set(unsigned long *map, unsigned int start, unsigned int len);
unsigned int bitmap_weight(const unsigned long *map, unsigned int nbits);
unsigned int find_next_bit(const unsigned long *map, unsigned int nbits,
			   unsigned int start);
int bitmap_parselist(const char *text, unsigned long *map, unsigned int nbits);
int bitmap_print_list(const unsigned long *map, unsigned int nbits,
		      char *buf, size_t size);
/* The kernel's hex format ("%*pb", bitmap_parse()); see bitmap_hex.c. */
int bitmap_print_hex(const unsigned long *map, unsigned int nbits, char *buf, size_t size);
int bitmap_parse_hex(const char *text, size_t len, unsigned long *map, unsigned int nbits);

#endif
