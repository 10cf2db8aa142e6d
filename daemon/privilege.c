/* Capabilities by capset(2) and the worker filter as classic BPF for
 * seccomp(2): no library needed for either. */
#define _GNU_SOURCE
#include "privilege.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef CAP_BPF
#define CAP_BPF 39
#endif
#define CAP_LAST_KNOWN 40

/* Reload rewrites the programs' maps through fds held since the attach,
 * which needs no capability. */
uint64_t priv_needed_caps(int dispatcher)
{
	uint64_t caps = 1ull << CAP_NET_ADMIN;

	if (dispatcher)
		caps |= 1ull << CAP_BPF | 1ull << CAP_SYS_ADMIN;
	return caps;
}

int priv_drop(uint64_t keep, char *err, size_t errlen)
{
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2];

	/* the bounding set first: dropping from it needs CAP_SETPCAP */
	for (int c = 0; c <= CAP_LAST_KNOWN; c++)
		if (!(keep >> c & 1) && prctl(PR_CAPBSET_READ, c, 0, 0, 0) == 1 &&
		    prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0) {
			snprintf(err, errlen, "cannot drop capability %d from the bounding set: %s", c,
				 strerror(errno));
			return -1;
		}
	if (syscall(SYS_capget, &hdr, data) < 0) {
		snprintf(err, errlen, "capget: %s", strerror(errno));
		return -1;
	}
	for (int i = 0; i < 2; i++) {
		uint32_t k = (uint32_t)(keep >> (32 * i));

		data[i].permitted &= k;
		data[i].effective &= k;
		data[i].inheritable = 0;
	}
	if (syscall(SYS_capset, &hdr, data) < 0) {
		snprintf(err, errlen, "capset: %s", strerror(errno));
		return -1;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		snprintf(err, errlen, "no_new_privs: %s", strerror(errno));
		return -1;
	}
	return 0;
}

#if defined(__x86_64__)
#define PRIV_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define PRIV_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

#define ALLOW(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
		  BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

int priv_worker_filter(char *err, size_t errlen)
{
#ifdef PRIV_AUDIT_ARCH
	/* What a worker's loop and its backends call (AF_XDP kicks and
	 * wake-ups, poll when idle, the clock, futexes of libc and DPDK's
	 * lcore pipes), what libc may call underneath (memory, signals,
	 * rseq) and what a sanitizer's report needs (write). */
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PRIV_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		ALLOW(SYS_read), ALLOW(SYS_write),
		ALLOW(SYS_sendto), ALLOW(SYS_recvfrom), ALLOW(SYS_sendmsg), ALLOW(SYS_recvmsg),
		ALLOW(SYS_ppoll), ALLOW(SYS_epoll_pwait),
#ifdef SYS_poll
		ALLOW(SYS_poll),
#endif
#ifdef SYS_epoll_wait
		ALLOW(SYS_epoll_wait),
#endif
		ALLOW(SYS_clock_gettime), ALLOW(SYS_clock_nanosleep), ALLOW(SYS_nanosleep),
		ALLOW(SYS_gettimeofday), ALLOW(SYS_futex), ALLOW(SYS_sched_yield),
		ALLOW(SYS_getpid), ALLOW(SYS_gettid), ALLOW(SYS_getrandom),
		ALLOW(SYS_mmap), ALLOW(SYS_munmap), ALLOW(SYS_madvise), ALLOW(SYS_mprotect),
		ALLOW(SYS_mremap), ALLOW(SYS_brk),
		ALLOW(SYS_rt_sigprocmask), ALLOW(SYS_rt_sigreturn), ALLOW(SYS_sigaltstack),
		ALLOW(SYS_tgkill), ALLOW(SYS_restart_syscall), ALLOW(SYS_rseq),
		ALLOW(SYS_exit), ALLOW(SYS_exit_group),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = {(unsigned short)(sizeof(filter) / sizeof(filter[0])), filter};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) {
		snprintf(err, errlen, "seccomp filter refused: %s", strerror(errno));
		return -1;
	}
	return 0;
#else
	snprintf(err, errlen, "no system call table for this architecture");
	return -1;
#endif
}
