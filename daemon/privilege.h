/* Least privilege (docs/security.md). Once rampartd has attached its XDP
 * programs and opened its sockets it keeps only the capabilities it still
 * uses (to detach the programs at stop and to rewrite their maps on
 * reload), and each worker thread runs under a seccomp filter that allows
 * the few system calls a packet loop makes: a worker that is made to do
 * anything else (open a file, make a socket, exec, load BPF) kills the
 * process instead. */
#ifndef RAMPART_DAEMON_PRIVILEGE_H
#define RAMPART_DAEMON_PRIVILEGE_H

#include <stddef.h>
#include <stdint.h>

/* The capabilities to keep (bits of CAP_*, as /proc/PID/status shows
 * them): NET_ADMIN, to detach the programs at stop; with libxdp's
 * dispatcher on some interface also BPF and SYS_ADMIN, which its detach
 * needs. */
uint64_t priv_needed_caps(int dispatcher);

/* Calling thread (and the threads it creates afterwards): permitted and
 * effective sets cut to keep, nothing inheritable, every
 * other capability out of the bounding set, no_new_privs. 0, or -1 with
 * err (then nothing may have changed, or only part: the caller says so
 * and goes on, as it would without the feature). */
int priv_drop(uint64_t keep, char *err, size_t errlen);

/* Calling thread: the worker filter (no_new_privs first). 0, or -1 with
 * err (no seccomp in this kernel, an architecture we have no table for). */
int priv_worker_filter(char *err, size_t errlen);

#endif
