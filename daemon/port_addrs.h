/* Router mode on kernel ports: follow each port's addresses as the
 * kernel changes them (a DHCP lease renewed with another address, an
 * address added by hand). Masquerade, the router's own replies and the
 * `local` check use a port's address; they take a new one with the next
 * policy build, which a reload makes (the prepare hook below), and which
 * rampartd makes by itself when it sees an address change and the policy
 * file in force is the one on disk (docs/operations.md). */
#ifndef RAMPART_DAEMON_PORT_ADDRS_H
#define RAMPART_DAEMON_PORT_ADDRS_H

#include <stdint.h>
#include "pipeline.h"

struct worker;
struct reloader;

struct port_addr_watch {
	uint32_t nports;
	const char *const *ifnames;
	uint8_t fixed[PIPE_MAX_PORTS];	/* --port-addr: not the kernel's */
	struct pipe_port_addrs applied[PIPE_MAX_PORTS];	/* the workers' next builds' */
	struct worker *const *workers;
	uint32_t nworkers;
	int told;		/* the file changed on disk: said once a change */
};

/* Start from the addresses the workers were made with (cfg). */
void port_addrs_init(struct port_addr_watch *pw, const struct pipe_config *cfg,
		     const char *const *ifnames, const uint8_t *fixed,
		     struct worker *const *workers, uint32_t nworkers);

/* 1 when the kernel's addresses of some port now differ from the applied
 * ones (cheap enough for once a second: one getifaddrs). */
int port_addrs_changed(const struct port_addr_watch *pw);

/* A reload's prepare hook (reload.h): read the kernel's addresses, say
 * which changed, and hand them to every worker's next build. */
void port_addrs_prepare(void *ctx);

/* Once a second from the main thread: when the kernel's addresses
 * changed, build the policy in force again for them (a reload of the
 * same file, flows kept), unless the file on disk is no longer the
 * artifact in force (then say so once: a reload by hand applies both). */
void port_addrs_tick(struct port_addr_watch *pw, struct reloader *r);

/* Text of a port's addresses, "10.0.0.1 fd00::1" or "none", into buf: the
 * first of each family (what masquerade and replies use), then the others. */
const char *port_addrs_text(const struct pipe_port_addrs *a, char *buf, size_t len);
/* A buffer that holds every address port_addrs_text writes. */
#define PORT_ADDRS_TEXT ((1 + PIPE_PORT_MORE_ADDRS) * (16 + 46))

#endif
