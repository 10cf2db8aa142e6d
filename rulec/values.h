/* Scalar values of the policy language: addresses and prefixes, protocols,
 * ports and port ranges. Shared by the compiler and `rulec query`, so both
 * read "10.0.0.1" or "tcp" the same way. */
#ifndef RULEC_VALUES_H
#define RULEC_VALUES_H

#include <stddef.h>
#include <stdint.h>

struct prefix {
	uint8_t family;		/* 4 or 6 */
	uint8_t len;
	uint8_t addr[16];	/* network byte order, IPv4 in the first 4 */
};

/* "10.0.0.0/8", "10.0.0.1", "fd00::/8", "fd00::1". 0, or -1 with the
 * complete message in why (e.g. host bits set, with the fix). */
int val_parse_prefix(const char *s, struct prefix *p, char *why, size_t whylen);

/* A bare address (no length): 0 with family 4/6 and addr filled, or -1. */
int val_parse_addr(const char *s, uint8_t *family, uint8_t addr[16]);

void val_format_prefix(const struct prefix *p, char *buf, size_t len);

/* Does s look like an address rather than a name? Names start with a letter
 * or '_' and hold no '.', ':' or '/'. */
int val_looks_like_addr(const char *s);

/* A protocol name (tcp udp icmp icmpv6 sctp gre esp) or number 0..255;
 * -1 when s is neither. */
int val_parse_proto(const char *s);
const char *val_proto_name(int proto, char *buf, size_t len);
/* TCP, UDP and SCTP carry ports the classifier can match. */
int val_proto_has_ports(int proto);

/* "80" or "1024-65535". 0, or -1 with the message in why. */
int val_parse_port_range(const char *s, uint16_t *lo, uint16_t *hi, char *why, size_t whylen);
/* A decimal number 0..max with no sign or junk; 0 or -1. */
int val_parse_uint(const char *s, unsigned long max, unsigned long *out);

/* An ICMP (proto 1) or ICMPv6 (proto 58) type by name or number, with an
 * optional "/CODE": "echo-request", "8", "3/4". 0 with *code -1 when no
 * code is given, or -1 when s is not a type of that protocol. */
int val_parse_icmp(const char *s, int proto, int *type, int *code);
/* The type names of proto, comma-separated, for messages. */
const char *val_icmp_names(int proto);

/* A TCP flag name (fin syn rst psh ack urg ece cwr): its bit, or -1. */
int val_tcp_flag(const char *s);

/* A valid object or rule name: [A-Za-z_][A-Za-z0-9_.-]* without ':'/'/'. */
int val_is_name(const char *s);

#endif
