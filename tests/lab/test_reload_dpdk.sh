#!/usr/bin/env bash
# The hot reload lab test (test_reload.sh) on the DPDK backend: rampartd
# on net_af_xdp over the same veths, the same reloader and checks (but
# the XDP host maps, which are AF_XDP's); 50 reloads under traffic (30
# under ASan).
exec env RELOAD_BACKEND=dpdk \
	bash "$(dirname "$0")/test_reload.sh"
