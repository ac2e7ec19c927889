/* SPDX-License-Identifier: Apache-2.0 */
/*
 * file_checks.c — regular files only, never opened blocking (file_checks.h).
 */
#include "file_checks.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
         : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "a special file";
}

FILE *gp_file_open_regular(const char *path, const char *mode, char *why, size_t len)
{
    /* O_NONBLOCK: opening a FIFO for reading would wait for a writer */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, len, "%s", strerror(errno));
        return NULL;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        snprintf(why, len, "%s", strerror(errno));
        close(fd);
        return NULL;
    }
    if (!S_ISREG(sb.st_mode)) {
        snprintf(why, len, "it is %s, not a regular file", kind(sb.st_mode));
        close(fd);
        errno = EINVAL;
        return NULL;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0) (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    FILE *f = fdopen(fd, mode);
    if (!f) {
        snprintf(why, len, "%s", strerror(errno));
        close(fd);
    }
    return f;
}

int gp_file_output_ok(const char *path, char *why, size_t len)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || S_ISREG(sb.st_mode)) return 0;
    snprintf(why, len, "it exists as %s, which gravplug never writes or replaces", kind(sb.st_mode));
    return -1;
}

const char *gp_file_rename_target_bad(const char *path, const char *tmp, char *why, size_t len)
{
    if (gp_file_output_ok(path, why, len) != 0) return path;
    if (gp_file_output_ok(tmp, why, len) != 0) return tmp;
    return NULL;
}
