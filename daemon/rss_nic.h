/* A kernel interface's RSS settings (key, indirection table, fields
 * hashed), for rampartd --home rss (rss_home.h). */
#ifndef RAMPART_DAEMON_RSS_NIC_H
#define RAMPART_DAEMON_RSS_NIC_H

#include <stddef.h>
#include "rss_home.h"

/* 0 with c filled; 1 when the driver does not say (veth, a NIC without
 * RSS): the caller needs the key from elsewhere; -1 with err when it says
 * something --home rss cannot follow (another hash function, a
 * transformed input) or cannot be read. */
int rss_nic_read(const char *ifname, struct rss_port_conf *c, char *err, size_t errlen);

#endif
