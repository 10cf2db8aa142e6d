/* What a kernel interface's RSS does, read with the ethtool ioctl (what
 * `ethtool -x IF` and `ethtool -n IF rx-flow-hash tcp4` print), for
 * rampartd --home rss: ETHTOOL_GRSSH for the key, the indirection table
 * and the hash function, ETHTOOL_GRXFH for the fields hashed. */
#include "rss_nic.h"

#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define HFUNC_TOEPLITZ 1	/* ETH_RSS_HASH_TOP (linux/ethtool.h of kernels after 4.4) */

static int ethtool(int fd, const char *ifname, void *cmd)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = cmd;
	return ioctl(fd, SIOCETHTOOL, &ifr);
}

/* Whether the driver hashes the ports of a flow type: 1, 0, or -1 when
 * it does not say. */
static int ports_hashed(int fd, const char *ifname, uint32_t flow_type)
{
	struct ethtool_rxnfc nfc;

	memset(&nfc, 0, sizeof(nfc));
	nfc.cmd = ETHTOOL_GRXFH;
	nfc.flow_type = flow_type;
	if (ethtool(fd, ifname, &nfc))
		return -1;
	return (nfc.data & (RXH_L4_B_0_1 | RXH_L4_B_2_3)) == (RXH_L4_B_0_1 | RXH_L4_B_2_3);
}

static int read_rssh(int fd, const char *ifname, struct rss_port_conf *c, char *err,
		     size_t errlen)
{
	struct ethtool_rxfh head, *full;
	uint8_t hfunc, xfrm;
	size_t size;

	memset(&head, 0, sizeof(head));
	head.cmd = ETHTOOL_GRSSH;
	if (ethtool(fd, ifname, &head)) {
		if (errno == EOPNOTSUPP || errno == EINVAL)
			return 1;
		snprintf(err, errlen, "%s: cannot read its RSS settings: %s", ifname,
			 strerror(errno));
		return -1;
	}
	if (!head.key_size || !head.indir_size)
		return 1;	/* a driver that hashes without saying how */
	if (head.key_size > RSS_KEY_MAX || head.indir_size > RSS_TABLE_MAX) {
		snprintf(err, errlen, "%s: an RSS key of %u bytes and a table of %u entries "
				      "(at most %d and %d are read)", ifname, head.key_size,
			 head.indir_size, RSS_KEY_MAX, RSS_TABLE_MAX);
		return -1;
	}
	size = sizeof(*full) + head.indir_size * sizeof(uint32_t) + head.key_size;
	full = calloc(1, size);
	if (!full) {
		snprintf(err, errlen, "%s: RSS settings: out of memory", ifname);
		return -1;
	}
	full->cmd = ETHTOOL_GRSSH;
	full->indir_size = head.indir_size;
	full->key_size = head.key_size;
	if (ethtool(fd, ifname, full)) {
		snprintf(err, errlen, "%s: cannot read its RSS settings: %s", ifname,
			 strerror(errno));
		free(full);
		return -1;
	}
	hfunc = full->hfunc;
	xfrm = full->rsvd8[0];	/* input_xfrm in kernels from 6.8 */
	c->table_size = full->indir_size;
	memcpy(c->table, full->rss_config, full->indir_size * sizeof(uint32_t));
	c->key_len = full->key_size;
	memcpy(c->key, (uint8_t *)(full->rss_config + full->indir_size), full->key_size);
	free(full);
	if (hfunc && hfunc != HFUNC_TOEPLITZ) {
		snprintf(err, errlen, "%s: its RSS hash function is not Toeplitz (ethtool -X %s "
				      "hfunc toeplitz)", ifname, ifname);
		return -1;
	}
	if (xfrm) {
		snprintf(err, errlen, "%s: its RSS input is transformed (ethtool -X %s xfrm "
				      "none, with a symmetric key instead)", ifname, ifname);
		return -1;
	}
	return 0;
}

int rss_nic_read(const char *ifname, struct rss_port_conf *c, char *err, size_t errlen)
{
	static const uint32_t types[2][2] = {{TCP_V4_FLOW, UDP_V4_FLOW},
					     {TCP_V6_FLOW, UDP_V6_FLOW}};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r;

	memset(c, 0, sizeof(*c));
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	r = read_rssh(fd, ifname, c, err, errlen);
	/* Fields hashed: ports unless the driver says otherwise (most hash
	 * TCP's by default; some leave UDP's out: ethtool -N IF rx-flow-hash
	 * udp4 sdfn puts them in). */
	for (int f = 0; r == 0 && f < 2; f++)
		for (int u = 0; u < 2; u++)
			c->ports[f][u] = ports_hashed(fd, ifname, types[f][u]) != 0;
	close(fd);
	return r;
}
