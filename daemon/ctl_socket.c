/* Creating the control socket's file (ctl_socket.h): permissions from
 * the start, and telling a dead daemon's socket from a live one by
 * connecting to it. */
#include "ctl_socket.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int make_dir(const char *path, char *err, size_t errlen)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0700) && errno != EEXIST) {
		snprintf(err, errlen, "control socket %s: cannot create %s: %s", path, dir,
			 strerror(errno));
		return -1;
	}
	return 0;
}

/* Is a daemon answering at addr? (connect succeeds: yes) */
static int socket_alive(const struct sockaddr_un *addr)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int alive;

	if (fd < 0)
		return 0;
	alive = connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0;
	close(fd);
	return alive;
}

int ctl_socket_listen(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un addr;
	mode_t old;
	int fd, r;

	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(addr.sun_path)) {
		snprintf(err, errlen, "control socket %s: path longer than %zu bytes", path,
			 sizeof(addr.sun_path) - 1);
		return -1;
	}
	if (make_dir(path, err, errlen))
		return -1;
	memcpy(addr.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "control socket: %s", strerror(errno));
		return -1;
	}
	/* 0600 from the start (no window in which others could connect);
	 * still single-threaded here, so the process umask may be borrowed */
	old = umask(0177);
	r = bind(fd, (struct sockaddr *)&addr, sizeof(addr));
	if (r && errno == EADDRINUSE) {
		if (socket_alive(&addr)) {
			umask(old);
			close(fd);
			snprintf(err, errlen, "control socket %s: another rampartd owns it (it "
				 "answers there); stop it or use --control", path);
			return -1;
		}
		/* a dead daemon's socket file */
		unlink(path);
		r = bind(fd, (struct sockaddr *)&addr, sizeof(addr));
	}
	umask(old);
	if (r || chmod(path, 0600) || listen(fd, 16)) {
		snprintf(err, errlen, "control socket %s: %s", path, strerror(errno));
		close(fd);
		if (!r)
			unlink(path);
		return -1;
	}
	return fd;
}

