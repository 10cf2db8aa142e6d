/* The router the stateful pipeline tests share: lan0 (10.100.0.1, the
 * client 10.100.0.5 and the server 10.100.0.10 behind it) and wan0
 * (10.0.1.1, gateway 10.0.1.254, the remote host 10.200.1.1 beyond),
 * with every neighbour known; a policy compiled from YAML text. For
 * cmocka tests (asserts on failure). */
#ifndef RAMPART_TEST_ROUTER_LAB_H
#define RAMPART_TEST_ROUTER_LAB_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline.h"
#include "rulec.h"

static const uint8_t lan_mac[6] = {2, 0xaa, 0, 0, 0, 1}, wan_mac[6] = {2, 0xaa, 0, 0, 0, 2};
static const uint8_t gw_mac[6] = {2, 0xbb, 0, 0, 0, 0xfe}, client_mac[6] = {2, 0xcc, 0, 0, 0, 5};
static const uint8_t server_mac[6] = {2, 0xcc, 0, 0, 0, 10};
static const uint8_t wan_ip[4] = {10, 0, 1, 1}, client_ip[4] = {10, 100, 0, 5};
static const uint8_t server_ip[4] = {10, 100, 0, 10}, remote_ip[4] = {10, 200, 1, 1};

/* Eight port forwards (tcp/9001-9008 on wan0's address to 10.100.0.20:22)
 * for a policy's nat list, before its own: with those it has nine DNAT
 * entries, so they are looked up by their classifier (runtime/nat_match.c,
 * the artifact's DNAT_* sections) rather than scanned. */
#define ROUTER_LAB_EIGHT_FORWARDS \
	"  - name: ssh-1\n" \
	"    match: {from: {zone: outside}, to: {service: tcp/9001, network: 10.0.1.1}}\n" \
	"    dnat: {to: 10.100.0.20, port: 22}\n" \
	"  - name: ssh-2\n" \
	"    match: {from: {zone: outside}, to: {service: tcp/9002, network: 10.0.1.1}}\n" \
	"    dnat: {to: 10.100.0.20, port: 22}\n" \
	"  - name: ssh-3\n" \
	"    match: {from: {zone: outside}, to: {service: tcp/9003, network: 10.0.1.1}}\n" \
	"    dnat: {to: 10.100.0.20, port: 22}\n" \
	"  - name: ssh-4\n" \
	"    match: {from: {zone: outside}, to: {service: tcp/9004, network: 10.0.1.1}}\n" \
	"    dnat: {to: 10.100.0.20, port: 22}\n" \
	"  - name: ssh-5\n" \
	"    match: {from: {zone: outside}, to: {service: tcp/9005, network: 10.0.1.1}}\n" \
	"    dnat: {to: 10.100.0.20, port: 22}\n" \
	"  - name: ssh-6\n" \
	"    match: {from: {zone: outside}, to: {service: tcp/9006, network: 10.0.1.1}}\n" \
	"    dnat: {to: 10.100.0.20, port: 22}\n" \
	"  - name: ssh-7\n" \
	"    match: {from: {zone: outside}, to: {service: tcp/9007, network: 10.0.1.1}}\n" \
	"    dnat: {to: 10.100.0.20, port: 22}\n" \
	"  - name: ssh-8\n" \
	"    match: {from: {zone: outside}, to: {service: tcp/9008, network: 10.0.1.1}}\n" \
	"    dnat: {to: 10.100.0.20, port: 22}\n"

/* A new empty file's name (mkstemp), for a state file: the same static
 * buffer each call. */
static inline char *router_lab_temp_path(void)
{
	static char path[40];	/* (callers add suffixes in 64 bytes) */
	int fd;

	strcpy(path, "/tmp/rampart-test-state-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	return path;
}

/* Compile YAML text into *buf (the caller frees it) and map it. */
static inline void router_lab_compile(const char *text, void **buf, size_t *len,
				      struct rfw_view *view)
{
	char path[] = "/tmp/rampart-test-router-XXXXXX";
	int fd = mkstemp(path);
	char err[256];

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(rulec_compile(path, stderr, buf, len), 0);
	unlink(path);
	assert_int_equal(rfw_view_init(view, *buf, *len, err, sizeof(err)), 0);
}

/* The two ports, their MACs and addresses, into c. */
static inline void router_lab_ports(struct pipe_config *c)
{
	c->nports = 2;
	strcpy(c->port[0].name, "lan0");
	memcpy(c->port[0].mac, lan_mac, 6);
	c->port[0].has_v4 = 1;
	memcpy(c->port[0].v4, (uint8_t[]){10, 100, 0, 1}, 4);
	strcpy(c->port[1].name, "wan0");
	memcpy(c->port[1].mac, wan_mac, 6);
	c->port[1].has_v4 = 1;
	memcpy(c->port[1].v4, wan_ip, 4);
}

/* The gateway, the client and the server, as neighbours of w. */
static inline void router_lab_neighbours(struct pipe_worker *w)
{
	assert_int_equal(pipe_neigh_set(w, 1, 4, (uint8_t[]){10, 0, 1, 254}, gw_mac), 0);
	assert_int_equal(pipe_neigh_set(w, 0, 4, client_ip, client_mac), 0);
	assert_int_equal(pipe_neigh_set(w, 0, 4, server_ip, server_mac), 0);
}

#endif
