/* SPDX-License-Identifier: GPL-2.0-or-later */
/* value.h: the data a template sees (design.md §12): strings, integers,
 * booleans, none, lists and ordered maps, all allocated in one arena that
 * is freed at once.  YAML scalars stay strings; JSON brings the rest.
 *
 * Part of lib/render/, for the tools only, never mad.so (the folder's rules
 * are in template.h).  The one error here is running out of memory: NULL,
 * -1, or a V_UNDEF value named "out of memory", never a message of its own.
 * Never prints, exits or keeps a global; an arena belongs to one thread. */
#ifndef MAD_VALUE_H
#define MAD_VALUE_H

#include <stddef.h>

struct arena;

enum vtype { V_UNDEF, V_NONE, V_BOOL, V_INT, V_STR, V_LIST, V_DICT };

struct value;

struct vlist {
	size_t n, cap;
	struct value *item;
};

struct vdict {
	size_t n, cap;
	const char **key;
	size_t *klen;
	struct value *val;
};

struct value {
	enum vtype t;
	int raw; /* printed as is, not as a shell word */
	union {
		int b;
		long long i;
		struct {
			const char *s;
			size_t len;
		} str;
		struct vlist *list;
		struct vdict *dict;
		const char *undef_name; /* what was not found, for the message */
	} u;
};

struct arena *arena_new(void);
void arena_free(struct arena *a);
/* Zeroed memory that lives as long as the arena; NULL when out of memory. */
void *arena_alloc(struct arena *a, size_t size);
/* A NUL-terminated copy of S[0..LEN). */
char *arena_strndup(struct arena *a, const char *s, size_t len);

struct value v_undef(const char *name);
struct value v_none(void);
struct value v_bool(int b);
struct value v_int(long long i);
/* Copies S into the arena; t V_UNDEF (with name "out of memory") on failure. */
struct value v_str(struct arena *a, const char *s, size_t len);
/* Does not copy: S must live as long as the arena. */
struct value v_str_ref(const char *s, size_t len);
struct value v_list(struct arena *a);
struct value v_dict(struct arena *a);

int vlist_push(struct arena *a, struct vlist *l, struct value v);
/* Sets KEY (replacing an existing one, keeping its place). */
int vdict_set(struct arena *a, struct vdict *d, const char *key, size_t klen, struct value v);
/* The value of KEY, or NULL. */
struct value *vdict_get(const struct vdict *d, const char *key, size_t klen);

const char *vtype_name(enum vtype t);
/* Jinja2's truth: "", 0, none, empty list or map are false. */
int v_truthy(const struct value *v);
/* Python's ==: same type and value (True == 1 as in Python). */
int v_equal(const struct value *a, const struct value *b);
/* The text of a scalar as Python's str() gives it ("True", "None", "12");
 * -1 for a list, a map or undefined. */
int v_to_str(struct arena *a, const struct value *v, const char **s, size_t *len);

#endif
