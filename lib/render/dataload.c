/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dataload.c: see dataload.h. */
#include "dataload.h"
#include "error.h"
#include "shquote.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <yaml.h>

#define DEPTH_MAX 64

/* ------------------------------------------------------------ YAML */

struct yload {
	struct arena *a;
	yaml_parser_t p;
	const char *file;
	char *err;
	size_t size;
};

static int ynext(struct yload *y, yaml_event_t *ev)
{
	if (yaml_parser_parse(&y->p, ev))
		return 0;
	snprintf(y->err, y->size, "%s:%zu: %s%s%s", y->file, y->p.problem_mark.line + 1,
		 y->p.problem ? y->p.problem : "not valid YAML", y->p.context ? " " : "",
		 y->p.context ? y->p.context : "");
	return -1;
}

static int ynode(struct yload *y, yaml_event_t *ev, struct value *out, int depth);

static int yfail(struct yload *y, const yaml_event_t *ev, const char *why)
{
	snprintf(y->err, y->size, "%s:%zu: %s", y->file, ev->start_mark.line + 1, why);
	return -1;
}

static int ycollection(struct yload *y, yaml_event_t *start, struct value *out, int depth)
{
	int mapping = start->type == YAML_MAPPING_START_EVENT;
	yaml_event_t ev;

	*out = mapping ? v_dict(y->a) : v_list(y->a);
	if (out->t == V_UNDEF)
		return yfail(y, start, "out of memory");
	for (;;) {
		struct value key, val;

		if (ynext(y, &ev))
			return -1;
		if (ev.type == (mapping ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT)) {
			yaml_event_delete(&ev);
			return 0;
		}
		if (!mapping) {
			if (ynode(y, &ev, &val, depth + 1))
				return -1;
			if (vlist_push(y->a, out->u.list, val))
				return yfail(y, start, "out of memory");
			continue;
		}
		if (ev.type != YAML_SCALAR_EVENT) {
			int rc = yfail(y, &ev, "map keys must be plain text");

			yaml_event_delete(&ev);
			return rc;
		}
		if (ynode(y, &ev, &key, depth + 1))
			return -1;
		if (ynext(y, &ev) || ynode(y, &ev, &val, depth + 1))
			return -1;
		if (vdict_set(y->a, out->u.dict, key.u.str.s, key.u.str.len, val))
			return yfail(y, start, "out of memory");
	}
}

/* Takes ownership of EV. */
static int ynode(struct yload *y, yaml_event_t *ev, struct value *out, int depth)
{
	int rc = 0;

	if (depth > DEPTH_MAX) {
		rc = yfail(y, ev, "nested deeper than 64 levels");
	} else if (ev->type == YAML_ALIAS_EVENT) {
		rc = yfail(y, ev, "aliases (*name) are not supported");
	} else if (ev->type == YAML_SCALAR_EVENT) {
		/* every scalar is a string: the template converts ('| int') */
		*out = v_str(y->a, (const char *)ev->data.scalar.value, ev->data.scalar.length);
		if (out->t == V_UNDEF)
			rc = yfail(y, ev, "out of memory");
	} else if (ev->type == YAML_SEQUENCE_START_EVENT || ev->type == YAML_MAPPING_START_EVENT) {
		yaml_event_t start = *ev;

		if ((ev->type == YAML_SEQUENCE_START_EVENT && ev->data.sequence_start.anchor) ||
		    (ev->type == YAML_MAPPING_START_EVENT && ev->data.mapping_start.anchor))
			rc = yfail(y, ev, "anchors (&name) are not supported");
		else
			rc = ycollection(y, &start, out, depth);
	} else {
		rc = yfail(y, ev, "unexpected YAML");
	}
	yaml_event_delete(ev);
	return rc;
}

static int load_yaml(struct arena *a, struct value *top, const char *file, const char *text,
		     size_t len, char *err, size_t size)
{
	struct yload y = { a, { 0 }, file, err, size };
	yaml_event_t ev;
	int rc = -1, docs = 0;

	*top = v_none();
	if (!yaml_parser_initialize(&y.p))
		return mad_error(err, size, "%s: out of memory", file);
	yaml_parser_set_input_string(&y.p, (const unsigned char *)text, len);
	for (;;) {
		if (ynext(&y, &ev))
			goto out;
		if (ev.type == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (ev.type == YAML_STREAM_START_EVENT || ev.type == YAML_DOCUMENT_END_EVENT) {
			yaml_event_delete(&ev);
			continue;
		}
		if (ev.type == YAML_DOCUMENT_START_EVENT) {
			if (docs++) {
				yfail(&y, &ev, "more than one YAML document");
				yaml_event_delete(&ev);
				goto out;
			}
			yaml_event_delete(&ev);
			continue;
		}
		if (ynode(&y, &ev, top, 0))
			goto out;
	}
	rc = 0;
out:
	yaml_parser_delete(&y.p);
	return rc;
}

/* ------------------------------------------------------------ JSON */

static size_t line_of(const char *text, size_t len, const char *at)
{
	size_t line = 1;

	for (const char *p = text; p < at && p < text + len; p++)
		line += *p == '\n';
	return line;
}

static int from_json(struct arena *a, const cJSON *j, struct value *out, const char *file,
		     char *err, size_t size, int depth)
{
	if (depth > DEPTH_MAX)
		return mad_error(err, size, "%s: nested deeper than 64 levels", file);
	if (cJSON_IsString(j)) {
		*out = v_str(a, j->valuestring, strlen(j->valuestring));
	} else if (cJSON_IsNumber(j)) {
		double d = j->valuedouble;

		if (d != floor(d) || fabs(d) > 9007199254740992.0)
			return mad_error(err, size,
					 "%s: the number %g is not an integer (only integers are supported)",
					 file, d);
		*out = v_int((long long)d);
	} else if (cJSON_IsBool(j)) {
		*out = v_bool(cJSON_IsTrue(j));
	} else if (cJSON_IsNull(j)) {
		*out = v_none();
	} else if (cJSON_IsArray(j) || cJSON_IsObject(j)) {
		const cJSON *item;

		*out = cJSON_IsArray(j) ? v_list(a) : v_dict(a);
		if (out->t == V_UNDEF)
			goto oom;
		cJSON_ArrayForEach(item, j)
		{
			struct value v;

			if (from_json(a, item, &v, file, err, size, depth + 1))
				return -1;
			if (out->t == V_LIST ?
				    vlist_push(a, out->u.list, v) :
				    vdict_set(a, out->u.dict, item->string, strlen(item->string), v))
				goto oom;
		}
		return 0;
	} else {
		return mad_error(err, size, "%s: unexpected JSON value", file);
	}
	if (out->t == V_UNDEF)
		goto oom;
	return 0;
oom:
	return mad_error(err, size, "%s: out of memory", file);
}

/* A number written with '.', 'e' or 'E' is a float even when its value is
 * whole (1.0, 1e3): refused, as only integers are supported. */
static const char *json_float(const char *text, size_t len)
{
	int in_string = 0;

	for (size_t i = 0; i < len; i++) {
		char ch = text[i];

		if (in_string) {
			if (ch == '\\')
				i++;
			else if (ch == '"')
				in_string = 0;
		} else if (ch == '"') {
			in_string = 1;
		} else if (ch == '-' || (ch >= '0' && ch <= '9')) {
			size_t b = i;

			while (i < len && strchr("0123456789+-.eE", text[i]))
				i++;
			if (memchr(text + b, '.', i - b) || memchr(text + b, 'e', i - b) ||
			    memchr(text + b, 'E', i - b))
				return text + b;
			i--;
		}
	}
	return NULL;
}

static int load_json(struct arena *a, struct value *top, const char *file, const char *text,
		     size_t len, char *err, size_t size)
{
	const char *flt;
	const char *end = NULL;
	cJSON *j;
	int rc;

	if (memchr(text, '\0', len))
		return mad_error(err, size, "%s:%zu: a NUL byte", file,
				 line_of(text, len, memchr(text, '\0', len)));
	flt = json_float(text, len);
	if (flt) {
		size_t n = 0;

		while (flt + n < text + len && strchr("0123456789+-.eE", flt[n]))
			n++;
		return mad_error(err, size,
				 "%s:%zu: the number %.*s is not an integer (only integers are supported)",
				 file, line_of(text, len, flt), (int)(n > 40 ? 40 : n), flt);
	}
	j = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (j && end) { /* only white space after the value */
		while (end < text + len && (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r'))
			end++;
		if (end < text + len) {
			cJSON_Delete(j);
			return mad_error(err, size, "%s:%zu: text after the JSON value", file,
					 line_of(text, len, end));
		}
	}
	if (!j) {
		const char *at = cJSON_GetErrorPtr();

		return mad_error(err, size, "%s:%zu: not valid JSON", file,
				 at && at >= text && at <= text + len ? line_of(text, len, at) : 1);
	}
	rc = from_json(a, j, top, file, err, size, 0);
	cJSON_Delete(j);
	return rc;
}

/* ------------------------------------------------------------ merging */

int mad_data_load(struct arena *a, struct value *data, const char *file, const char *text,
		  size_t len, char *err, size_t size)
{
	size_t fl = strlen(file);
	struct value top;
	int json = fl >= 5 && strcmp(file + fl - 5, ".json") == 0;

	if ((json ? load_json : load_yaml)(a, &top, file, text, len, err, size))
		return -1;
	if (top.t == V_NONE)
		return 0; /* an empty file */
	if (top.t != V_DICT)
		return mad_error(err, size,
				 "%s:1: the top level must be a map of names to values, not a %s",
				 file, vtype_name(top.t));
	for (size_t i = 0; i < top.u.dict->n; i++)
		if (vdict_set(a, data->u.dict, top.u.dict->key[i], top.u.dict->klen[i],
			      top.u.dict->val[i]))
			return mad_error(err, size, "%s: out of memory", file);
	return 0;
}

int mad_data_define(struct arena *a, struct value *data, const char *def, char *err, size_t size)
{
	const char *eq = strchr(def, '='), *p = def;
	struct value *map = data;

	if (!eq)
		return mad_error(err, size, "-D '%s': expected KEY=VALUE", def);
	for (;;) {
		const char *dot = memchr(p, '.', (size_t)(eq - p));
		size_t n = (size_t)((dot ? dot : eq) - p);
		struct value *next;

		if (!shell_name_ok(p, n))
			return mad_error(err, size,
					 "-D '%.*s': '%.*s' is not a name ([A-Za-z_][A-Za-z0-9_]*)",
					 (int)(eq - def), def, (int)n, p);
		if (!dot)
			return vdict_set(a, map->u.dict, p, n, v_str(a, eq + 1, strlen(eq + 1))) ?
				       -1 :
				       0;
		next = vdict_get(map->u.dict, p, n);
		if (!next || next->t != V_DICT) {
			if (vdict_set(a, map->u.dict, p, n, v_dict(a)))
				return -1;
			next = vdict_get(map->u.dict, p, n);
		}
		map = next;
		p = dot + 1;
	}
}
