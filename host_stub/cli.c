/* SPDX-License-Identifier: Apache-2.0 */
/* cli.c — the command-line pieces gravhost's subcommands share (cli.h). */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

void gh_cli_version(void)
{
    printf("gravhost %s\n", GP_VERSION);
}

void gh_cli_begin(void)
{
    optind = 0; /* glibc: 0 re-initialises getopt for a new vector */
    opterr = 0; /* our own sentences, naming the subcommand */
}

int gh_cli_common(int c, const char *cmd, char **argv, gh_usage_fn usage)
{
    switch (c) {
    case GH_CLI_HELP:
        usage(stdout);
        return 0;
    case GH_CLI_VERSION:
        gh_cli_version();
        return 0;
    case ':':
    case '?': {
        /* A long option is named by its word (without any "=value"); a
         * short one by optopt (which for a long option may hold its code). */
        const char *word = optind > 0 ? argv[optind - 1] : "";
        int len = (int)strcspn(word, "=");
        if (strncmp(word, "--", 2) != 0 && optopt > 0 && optopt < 0x80) {
            if (c == ':') fprintf(stderr, "gravhost %s: -%c needs a value\n", cmd, optopt);
            else fprintf(stderr, "gravhost %s: unknown option \"-%c\"\n", cmd, optopt);
        } else if (c == ':') {
            fprintf(stderr, "gravhost %s: %.*s needs a value\n", cmd, len, word);
        } else {
            fprintf(stderr, "gravhost %s: unknown option \"%s\"\n", cmd, word);
        }
        usage(stderr);
        return 2;
    }
    default:
        return -1;
    }
}
