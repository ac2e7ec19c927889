/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli.h — what every gravhost subcommand's command line shares: -h/--help
 * (its usage on stdout, exit 0), --version (exit 0), and one way of
 * refusing what getopt_long could not parse (a sentence and the usage on
 * stderr, exit 2). The subcommands parse with getopt_long, so options may
 * come before or after the positional arguments and take --name=value as
 * well as --name value.
 */
#ifndef GH_CLI_H
#define GH_CLI_H

#include <getopt.h>
#include <stdio.h>

/* The two options every subcommand's option table starts with; the short
 * option string of each starts with GH_CLI_SHORT. */
#define GH_CLI_HELP    'h'
#define GH_CLI_VERSION 0x100
#define GH_CLI_COMMON_OPTIONS \
    { "help", no_argument, NULL, GH_CLI_HELP }, { "version", no_argument, NULL, GH_CLI_VERSION }
/* ":" first: a missing value is reported as ':' apart from an unknown
 * option ('?'), so each gets its own sentence. */
#define GH_CLI_SHORT ":h"

typedef void (*gh_usage_fn)(FILE *f);

/* Prints "gravhost VERSION" on stdout. */
void gh_cli_version(void);

/* Resets getopt_long for a new argument vector (argv[0] is the
 * subcommand's name) and silences its own messages. */
void gh_cli_begin(void);

/* For a getopt_long result c that is GH_CLI_HELP, GH_CLI_VERSION, '?' or
 * ':': does what it says and returns the exit status (0 or 2); for any other
 * c returns -1 and does nothing. cmd is the subcommand ("run"). */
int gh_cli_common(int c, const char *cmd, char **argv, gh_usage_fn usage);

#endif
