/* libFuzzer target: ARP and IPv6 neighbour discovery as a DPDK router
 * receives them (daemon/neigh_proto.h), on arbitrary frames: nothing read
 * past the frame, and whatever it answers is a well-formed frame (an ARP
 * reply, or an advertisement whose checksum verifies) of at most
 * NP_FRAME_MAX bytes. Input: the frame. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "csum.h"
#include "neigh_proto.h"

static const struct np_port port = {
	.mac = {2, 0xfa, 0, 0, 0, 1}, .has_v4 = 1, .has_v6 = 1,
	.v4 = {10, 60, 1, 1}, .v6 = {0xfd, 0, 0, 0x60, 0, 1, [15] = 1},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *f, reply[NP_FRAME_MAX + 16];
	struct np_learned l;
	uint32_t n;

	if (size > 2048)
		return 0;
	f = malloc(size ? size : 1);	/* exactly the frame: ASan sees any overread */
	if (!f)
		return 0;
	memcpy(f, data, size);
	memset(reply, 0xee, sizeof(reply));
	n = np_receive(&port, f, (uint32_t)size, &l, reply);
	if (n > NP_FRAME_MAX || reply[NP_FRAME_MAX] != 0xee)
		abort();			/* wrote past its room */
	if (l.family != 0 && l.family != 4 && l.family != 6)
		abort();
	if (l.family && (l.mac[0] & 1))
		abort();			/* never a multicast MAC learnt */
	if (n) {
		if (memcmp(reply + 6, port.mac, 6))
			abort();
		if (reply[12] == 0x08 && reply[13] == 0x06) {
			if (n != 60 || reply[21] != 2 || memcmp(reply + 28, port.v4, 4))
				abort();
		} else if (reply[12] == 0x86 && reply[13] == 0xdd) {
			uint16_t c = csum_l4(6, reply + 22, reply + 38, 58, reply + 54, 32);

			if (n != NP_FRAME_MAX || reply[54] != 136 || reply[21] != 255 ||
			    c != (uint16_t)(reply[56] << 8 | reply[57]) ||
			    memcmp(reply + 62, port.v6, 16))
				abort();
		} else {
			abort();
		}
	}
	free(f);
	return 0;
}
