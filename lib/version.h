/* SPDX-License-Identifier: GPL-2.0-or-later */
/* version.h: what mad-spank's programs say they are, in one place (the
 * tools' --version: print_version() in tools/common.c).  The
 * macros expand to string literals; config.h must be included first.
 *
 * mad.so's load message (MAD_LOAD_TEXT) is also the record of the SLURM
 * release it was built for: the text after MAD_BUILT_FOR in mad.so's file
 * is read back by mad_plugin_built_for() (plugstack.h), since a SPANK plugin
 * loads only into the major.minor it was built for. */
#ifndef MAD_VERSION_H
#define MAD_VERSION_H

#define MAD_BUILT_FOR ", built for SLURM "

/* "mad: mad-spank 0.1.0, built for SLURM 22.05.8": mad.so's load message.
 * No '%' in it: SLURM reads it as a format, spur prints it as it is. */
#define MAD_LOAD_TEXT "mad: " PACKAGE_NAME " " PACKAGE_VERSION MAD_BUILT_FOR MAD_SLURM_VERSION

#endif
