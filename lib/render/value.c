/* SPDX-License-Identifier: GPL-2.0-or-later */
/* value.c: see value.h. */
#include "value.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK (64 * 1024)

struct chunk {
	struct chunk *next;
	size_t used, size;
	max_align_t data[];
};

struct arena {
	struct chunk *head;
};

struct arena *arena_new(void)
{
	return calloc(1, sizeof(struct arena));
}

void arena_free(struct arena *a)
{
	struct chunk *c, *next;

	if (!a)
		return;
	for (c = a->head; c; c = next) {
		next = c->next;
		free(c);
	}
	free(a);
}

void *arena_alloc(struct arena *a, size_t size)
{
	struct chunk *c = a->head;
	size_t need = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
	void *p;

	if (size > ((size_t)1 << 40))
		return NULL;
	if (!c || c->size - c->used < need) {
		size_t sz = need > CHUNK ? need : CHUNK;

		c = malloc(sizeof(*c) + sz);
		if (!c)
			return NULL;
		c->used = 0;
		c->size = sz;
		c->next = a->head;
		a->head = c;
	}
	p = (char *)c->data + c->used;
	c->used += need;
	memset(p, 0, need);
	return p;
}

char *arena_strndup(struct arena *a, const char *s, size_t len)
{
	char *p = arena_alloc(a, len + 1);

	if (p) {
		memcpy(p, s, len);
		p[len] = '\0';
	}
	return p;
}

struct value v_undef(const char *name)
{
	struct value v = { V_UNDEF, 0, { 0 } };

	v.u.undef_name = name;
	return v;
}

struct value v_none(void)
{
	struct value v = { V_NONE, 0, { 0 } };

	return v;
}

struct value v_bool(int b)
{
	struct value v = { V_BOOL, 0, { 0 } };

	v.u.b = !!b;
	return v;
}

struct value v_int(long long i)
{
	struct value v = { V_INT, 0, { 0 } };

	v.u.i = i;
	return v;
}

struct value v_str_ref(const char *s, size_t len)
{
	struct value v = { V_STR, 0, { 0 } };

	v.u.str.s = s;
	v.u.str.len = len;
	return v;
}

struct value v_str(struct arena *a, const char *s, size_t len)
{
	char *p = arena_strndup(a, s, len);

	return p ? v_str_ref(p, len) : v_undef("out of memory");
}

struct value v_list(struct arena *a)
{
	struct value v = { V_LIST, 0, { 0 } };

	v.u.list = arena_alloc(a, sizeof(struct vlist));
	return v.u.list ? v : v_undef("out of memory");
}

struct value v_dict(struct arena *a)
{
	struct value v = { V_DICT, 0, { 0 } };

	v.u.dict = arena_alloc(a, sizeof(struct vdict));
	return v.u.dict ? v : v_undef("out of memory");
}

/* Grows an arena array of N items of SIZE to hold one more. */
static int grow(struct arena *a, void **items, size_t n, size_t *cap, size_t size)
{
	void *p;

	if (n < *cap)
		return 0;
	p = arena_alloc(a, (*cap ? *cap * 2 : 8) * size);
	if (!p)
		return -1;
	if (n)
		memcpy(p, *items, n * size);
	*items = p;
	*cap = *cap ? *cap * 2 : 8;
	return 0;
}

int vlist_push(struct arena *a, struct vlist *l, struct value v)
{
	size_t cap = l->cap;

	if (grow(a, (void **)&l->item, l->n, &cap, sizeof(*l->item)))
		return -1;
	l->cap = cap;
	l->item[l->n++] = v;
	return 0;
}

struct value *vdict_get(const struct vdict *d, const char *key, size_t klen)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->klen[i] == klen && memcmp(d->key[i], key, klen) == 0)
			return &d->val[i];
	return NULL;
}

int vdict_set(struct arena *a, struct vdict *d, const char *key, size_t klen, struct value v)
{
	struct value *have = vdict_get(d, key, klen);
	size_t cap;

	if (have) {
		*have = v;
		return 0;
	}
	cap = d->cap;
	if (grow(a, (void **)&d->key, d->n, &cap, sizeof(*d->key)))
		return -1;
	cap = d->cap;
	if (grow(a, (void **)&d->klen, d->n, &cap, sizeof(*d->klen)))
		return -1;
	cap = d->cap;
	if (grow(a, (void **)&d->val, d->n, &cap, sizeof(*d->val)))
		return -1;
	d->cap = cap;
	d->key[d->n] = arena_strndup(a, key, klen);
	if (!d->key[d->n])
		return -1;
	d->klen[d->n] = klen;
	d->val[d->n++] = v;
	return 0;
}

const char *vtype_name(enum vtype t)
{
	static const char *const names[] = {
		"undefined", "none", "boolean", "integer", "string", "list", "map",
	};

	return names[t];
}

int v_truthy(const struct value *v)
{
	switch (v->t) {
	case V_BOOL:
		return v->u.b;
	case V_INT:
		return v->u.i != 0;
	case V_STR:
		return v->u.str.len != 0;
	case V_LIST:
		return v->u.list->n != 0;
	case V_DICT:
		return v->u.dict->n != 0;
	default:
		return 0;
	}
}

int v_equal(const struct value *a, const struct value *b)
{
	if ((a->t == V_INT || a->t == V_BOOL) && (b->t == V_INT || b->t == V_BOOL))
		return (a->t == V_INT ? a->u.i : a->u.b) == (b->t == V_INT ? b->u.i : b->u.b);
	if (a->t != b->t)
		return 0;
	switch (a->t) {
	case V_NONE:
		return 1;
	case V_STR:
		return a->u.str.len == b->u.str.len &&
		       memcmp(a->u.str.s, b->u.str.s, a->u.str.len) == 0;
	case V_LIST:
		if (a->u.list->n != b->u.list->n)
			return 0;
		for (size_t i = 0; i < a->u.list->n; i++)
			if (!v_equal(&a->u.list->item[i], &b->u.list->item[i]))
				return 0;
		return 1;
	case V_DICT:
		if (a->u.dict->n != b->u.dict->n)
			return 0;
		for (size_t i = 0; i < a->u.dict->n; i++) {
			const struct value *o =
				vdict_get(b->u.dict, a->u.dict->key[i], a->u.dict->klen[i]);

			if (!o || !v_equal(&a->u.dict->val[i], o))
				return 0;
		}
		return 1;
	default:
		return 0;
	}
}

int v_to_str(struct arena *a, const struct value *v, const char **s, size_t *len)
{
	char buf[32];
	int n;

	switch (v->t) {
	case V_STR:
		*s = v->u.str.s;
		*len = v->u.str.len;
		return 0;
	case V_NONE:
		*s = "None";
		*len = 4;
		return 0;
	case V_BOOL:
		*s = v->u.b ? "True" : "False";
		*len = strlen(*s);
		return 0;
	case V_INT:
		n = snprintf(buf, sizeof(buf), "%lld", v->u.i);
		*s = arena_strndup(a, buf, (size_t)n);
		*len = (size_t)n;
		return *s ? 0 : -1;
	default:
		return -1;
	}
}
