/* SPDX-License-Identifier: Apache-2.0 */
/* dlopen-swap.c — see dlopen-swap.h. */
#include "dlopen-swap.h"

#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

static const char *swap_link, *swap_to;

void dlopen_swap_arm(const char *link, const char *target)
{
    swap_link = link;
    swap_to = target;
}

void *dlopen(const char *file, int mode)
{
    static void *(*real)(const char *, int);
    if (!real) *(void **)&real = dlsym(RTLD_NEXT, "dlopen");
    if (swap_link) {
        remove(swap_link);
        if (symlink(swap_to, swap_link) != 0) fprintf(stderr, "# cannot re-point %s\n", swap_link);
        swap_link = NULL;
    }
    return real(file, mode);
}
