/* The control socket's file: a listening Unix stream socket at a path,
 * mode 0600 in a directory made 0700 when missing; a stale socket left by
 * a dead rampartd is replaced, a live one is left to its owner. */
#ifndef RAMPART_DAEMON_CTL_SOCKET_H
#define RAMPART_DAEMON_CTL_SOCKET_H

#include <stddef.h>

/* The listening fd, or -1 with err (another rampartd answers at path, or
 * the socket cannot be made). Call while single-threaded: it borrows the
 * process umask. */
int ctl_socket_listen(const char *path, char *err, size_t errlen);

#endif
