/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target for the hosts file reader (mad_hosts_find in
 * lib/netaddr): the input's first line is the name, the rest the file.
 * Beyond "no crash": an address found is an address that fits its buffer,
 * the name in other case finds the same one, and the file as given finds
 * what it finds line by line: an IPv4 address on the first line that has
 * one for the name, else an IPv6 one. */
#include "fuzz.h"
#include "netaddr.h"

#include <arpa/inet.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[256], other[256], out[MAD_ADDR_MAX], again[MAD_ADDR_MAX], line[MAD_ADDR_MAX];
	const char *text;
	size_t n, i;
	struct in_addr a4;
	int found, v4 = 0;

	if (fuzz_name_then_file(data, size, name, sizeof(name), &text, &size))
		return 0;
	n = strlen(name);
	found = mad_hosts_find(text, size, name, out, sizeof(out));
	if (!found)
		return 0;
	check(strlen(out) < sizeof(out) && mad_addr_valid(out));
	for (i = 0; i <= n; i++)
		other[i] = name[i] >= 'a' && name[i] <= 'z' ? (char)(name[i] - 32) : name[i];
	check(mad_hosts_find(text, size, other, again, sizeof(again)) == 1);
	check(strcmp(out, again) == 0);
	/* the first line that names it with an IPv4 address gives that one */
	for (const char *p = text, *end = text + size; p < end;) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		size_t len = e ? (size_t)(e - p) : (size_t)(end - p);

		if (mad_hosts_find(p, len, name, line, sizeof(line)) &&
		    inet_pton(AF_INET, line, &a4) == 1) {
			check(strcmp(out, line) == 0);
			v4 = 1;
			break;
		}
		if (!e)
			break;
		p = e + 1;
	}
	check(v4 == (inet_pton(AF_INET, out, &a4) == 1));
	return 0;
}
