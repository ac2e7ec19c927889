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

int gp_file_create_new(const char *path, char *why, size_t len)
{
    for (int tries = 0; tries < 2; ++tries) {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0) return fd;
        if (errno != EEXIST || tries > 0 || unlink(path) != 0) break;
    }
    snprintf(why, len, "%s", strerror(errno));
    return -1;
}

FILE *gp_file_open_log(const char *path, int append, char *why, size_t len)
{
    /* O_NONBLOCK: a FIFO is refused below, never waited on */
    int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (append ? O_APPEND : 0), 0666);
    if (fd < 0) {
        if (errno == ELOOP) snprintf(why, len, "it is a symbolic link, which gravplug never writes through");
        else snprintf(why, len, "%s", strerror(errno));
        return NULL;
    }
    struct stat sb;
    const char *bad = NULL;
    if (fstat(fd, &sb) != 0) bad = strerror(errno);
    else if (!S_ISREG(sb.st_mode)) bad = kind(sb.st_mode);
    else if (sb.st_nlink > 1) bad = "a file with other names (hard links), which gravplug never writes";
    if (bad) {
        snprintf(why, len, "it is %s", bad);
        close(fd);
        return NULL;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0) (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    if (!append && ftruncate(fd, 0) != 0) {
        snprintf(why, len, "%s", strerror(errno));
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, append ? "a" : "w");
    if (!f) {
        snprintf(why, len, "%s", strerror(errno));
        close(fd);
    }
    return f;
}

int gp_file_open_dir(const char *dir, int *shared, char *why, size_t len)
{
    /* a trailing slash would follow a link at the last name */
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", dir);
    for (size_t k = strlen(buf); k > 1 && buf[k - 1] == '/'; --k) buf[k - 1] = '\0';
    int fd = open(buf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        struct stat sb;
        if ((errno == ELOOP || errno == ENOTDIR) && lstat(buf, &sb) == 0 && S_ISLNK(sb.st_mode))
            snprintf(why, len, "it is a symbolic link, which gravplug does not follow for an output directory: "
                     "give the directory it points to");
        else snprintf(why, len, "%s", strerror(errno));
        return -1;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        snprintf(why, len, "%s", strerror(errno));
        close(fd);
        return -1;
    }
    *shared = (sb.st_mode & S_IWOTH) || sb.st_uid != geteuid();
    return fd;
}
